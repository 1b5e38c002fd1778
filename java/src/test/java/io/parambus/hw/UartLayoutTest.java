package io.parambus.hw;

import static io.parambus.hw.UartTermios.*;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * struct termios2, the tty ioctls and the termios flags that UartTermios declares are
 * the installed headers' ({@code <asm/termbits.h>}, {@code <asm/ioctls.h>}): sizes,
 * offsets, request numbers and bit values, compared with java-uapi-layout's uart section.
 */
class UartLayoutTest {
    private static long u(int flag) {
        return Integer.toUnsignedLong(flag);
    }

    @Test
    void termios2AndTtyIoctlsAreTheHeaders() throws Exception {
        Map<String, Long> m = new TreeMap<>();
        m.put("termios2_size", TERMIOS2.byteSize());
        m.put("termios2_c_iflag", C_IFLAG);
        m.put("termios2_c_oflag", C_OFLAG);
        m.put("termios2_c_cflag", C_CFLAG);
        m.put("termios2_c_lflag", C_LFLAG);
        m.put("termios2_c_line", C_LINE);
        m.put("termios2_c_cc", C_CC);
        m.put("termios2_c_ispeed", C_ISPEED);
        m.put("termios2_c_ospeed", C_OSPEED);
        m.put("NCCS", (long) NCCS);
        m.put("VTIME", (long) VTIME);
        m.put("VMIN", (long) VMIN);
        m.put("TCGETS2", TCGETS2);
        m.put("TCSETS2", TCSETS2);
        m.put("TCSBRK", TCSBRK);
        m.put("TCFLSH", TCFLSH);
        m.put("TIOCEXCL", TIOCEXCL);
        m.put("TIOCNXCL", TIOCNXCL);
        m.put("TIOCOUTQ", TIOCOUTQ);
        m.put("FIONREAD", FIONREAD);
        m.put("TIOCSBRK", TIOCSBRK);
        m.put("TIOCCBRK", TIOCCBRK);
        m.put("TIOCGPTN", UartPty.TIOCGPTN);
        m.put("TIOCSPTLCK", UartPty.TIOCSPTLCK);
        m.put("TCIFLUSH", (long) TCIFLUSH);
        m.put("TCOFLUSH", (long) TCOFLUSH);
        m.put("TCIOFLUSH", (long) TCIOFLUSH);
        for (var e : Map.ofEntries(Map.entry("IGNBRK", IGNBRK), Map.entry("BRKINT", BRKINT),
                Map.entry("IGNPAR", IGNPAR), Map.entry("PARMRK", PARMRK), Map.entry("INPCK", INPCK),
                Map.entry("ISTRIP", ISTRIP), Map.entry("INLCR", INLCR), Map.entry("IGNCR", IGNCR),
                Map.entry("ICRNL", ICRNL), Map.entry("IUCLC", IUCLC), Map.entry("IXON", IXON),
                Map.entry("IXANY", IXANY), Map.entry("IXOFF", IXOFF), Map.entry("IMAXBEL", IMAXBEL),
                Map.entry("OPOST", OPOST), Map.entry("CBAUD", CBAUD), Map.entry("BOTHER", BOTHER),
                Map.entry("IBSHIFT", IBSHIFT), Map.entry("CSIZE", CSIZE), Map.entry("CS5", CS5),
                Map.entry("CS6", CS6), Map.entry("CS7", CS7), Map.entry("CS8", CS8), Map.entry("CSTOPB", CSTOPB),
                Map.entry("CREAD", CREAD), Map.entry("PARENB", PARENB), Map.entry("PARODD", PARODD),
                Map.entry("CLOCAL", CLOCAL), Map.entry("CMSPAR", CMSPAR), Map.entry("CRTSCTS", CRTSCTS),
                Map.entry("ISIG", ISIG), Map.entry("ICANON", ICANON), Map.entry("ECHO", ECHO),
                Map.entry("ECHOE", ECHOE), Map.entry("ECHOK", ECHOK), Map.entry("ECHONL", ECHONL),
                Map.entry("IEXTEN", IEXTEN)).entrySet()) {
            m.put(e.getKey(), u(e.getValue()));
        }
        UapiLayouts.assertSame("uart", m);
    }
}
