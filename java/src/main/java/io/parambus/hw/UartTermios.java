package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;

/**
 * The kernel's {@code struct termios2} and the tty ioctls and flags {@link Uart}
 * uses, declared once from {@code <asm-generic/termbits.h>} and
 * {@code <asm-generic/ioctls.h>} (the headers x86-64, arm64 and riscv64 use; the
 * other layouts, e.g. powerpc's or alpha's, are not ones this binding runs on) and
 * checked against the installed headers by {@code UartLayoutTest}.
 *
 * <p>termios2 rather than termios because only its {@code c_ispeed}/{@code c_ospeed}
 * with {@code BOTHER} express any baud rate; the C library's {@code cfsetspeed()}
 * takes only {@code Bxxx} constants. The encoding of a {@link UartConfig} into the
 * struct and back is here, as functions of a segment, so that a host test checks it
 * without a tty.
 */
final class UartTermios {
    private UartTermios() {
    }

    /** Control characters in {@code c_cc}, and the two of them raw reads use. */
    static final int NCCS = 19, VTIME = 5, VMIN = 6;

    /** {@code struct termios2}: four flag words, the line discipline, c_cc, two speeds (44 bytes). */
    static final StructLayout TERMIOS2 = MemoryLayout.structLayout(
            JAVA_INT.withName("c_iflag"),
            JAVA_INT.withName("c_oflag"),
            JAVA_INT.withName("c_cflag"),
            JAVA_INT.withName("c_lflag"),
            JAVA_BYTE.withName("c_line"),
            MemoryLayout.sequenceLayout(NCCS, JAVA_BYTE).withName("c_cc"),
            JAVA_INT.withName("c_ispeed"),
            JAVA_INT.withName("c_ospeed"));

    static final long C_IFLAG = offset("c_iflag"), C_OFLAG = offset("c_oflag"), C_CFLAG = offset("c_cflag"),
            C_LFLAG = offset("c_lflag"), C_LINE = offset("c_line"), C_CC = offset("c_cc"),
            C_ISPEED = offset("c_ispeed"), C_OSPEED = offset("c_ospeed");

    private static long offset(String field) {
        return TERMIOS2.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }

    /** {@code TCGETS2}, {@code TCSETS2}: {@code _IOR/_IOW('T', 0x2A/0x2B, struct termios2)}. */
    static final long TCGETS2 = Ioc.ior('T', 0x2A, TERMIOS2.byteSize()),
            TCSETS2 = Ioc.iow('T', 0x2B, TERMIOS2.byteSize());
    /** The classic tty ioctls (fixed numbers, not _IO-encoded). */
    static final long TCSBRK = 0x5409, TCFLSH = 0x540B, TIOCEXCL = 0x540C, TIOCNXCL = 0x540D, TIOCOUTQ = 0x5411,
            FIONREAD = 0x541B, TIOCSBRK = 0x5427, TIOCCBRK = 0x5428;
    /** {@code TCFLSH} arguments. */
    static final int TCIFLUSH = 0, TCOFLUSH = 1, TCIOFLUSH = 2;

    /** {@code c_iflag} bits. */
    static final int IGNBRK = 0x1, BRKINT = 0x2, IGNPAR = 0x4, PARMRK = 0x8, INPCK = 0x10, ISTRIP = 0x20,
            INLCR = 0x40, IGNCR = 0x80, ICRNL = 0x100, IUCLC = 0x200, IXON = 0x400, IXANY = 0x800, IXOFF = 0x1000,
            IMAXBEL = 0x2000;
    /** {@code c_oflag} bits. */
    static final int OPOST = 0x1;
    /** {@code c_cflag} bits ({@code CBAUD << IBSHIFT} is the input rate's field). */
    static final int CBAUD = 0x100F, BOTHER = 0x1000, IBSHIFT = 16, CSIZE = 0x30, CS5 = 0x0, CS6 = 0x10, CS7 = 0x20,
            CS8 = 0x30, CSTOPB = 0x40, CREAD = 0x80, PARENB = 0x100, PARODD = 0x200, CLOCAL = 0x800,
            CMSPAR = 0x40000000, CRTSCTS = 0x80000000;
    /** {@code c_lflag} bits. */
    static final int ISIG = 0x1, ICANON = 0x2, ECHO = 0x8, ECHOE = 0x10, ECHOK = 0x20, ECHONL = 0x40,
            IEXTEN = 0x8000;

    private static int get(MemorySegment t, long field) {
        return t.get(JAVA_INT, field);
    }

    private static void set(MemorySegment t, long field, int value) {
        t.set(JAVA_INT, field, value);
    }

    /**
     * Raw mode, as {@code cfmakeraw()} plus {@code CLOCAL | CREAD}: no line editing,
     * echo, signals or CR/LF translation, modem control lines ignored, receiver on,
     * and {@code VMIN} 1 / {@code VTIME} 0 (which {@link Uart}'s non-blocking
     * descriptor ignores, but another process opening the port sees).
     */
    static void makeRaw(MemorySegment t) {
        set(t, C_IFLAG, get(t, C_IFLAG) & ~(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXOFF
                | IXANY | INPCK | IUCLC | IMAXBEL));
        set(t, C_OFLAG, get(t, C_OFLAG) & ~OPOST);
        set(t, C_LFLAG, get(t, C_LFLAG) & ~(ECHO | ECHOE | ECHOK | ECHONL | ICANON | ISIG | IEXTEN));
        set(t, C_CFLAG, get(t, C_CFLAG) | CLOCAL | CREAD);
        t.set(JAVA_BYTE, C_CC + VMIN, (byte) 1);
        t.set(JAVA_BYTE, C_CC + VTIME, (byte) 0);
    }

    /** Writes config's rate (BOTHER, both directions), framing and flow control into t. */
    static void encode(MemorySegment t, UartConfig config) {
        int c = get(t, C_CFLAG) & ~(CSIZE | CSTOPB | PARENB | PARODD | CMSPAR | CRTSCTS | CBAUD | (CBAUD << IBSHIFT));
        c |= switch (config.dataBits()) {
            case 5 -> CS5;
            case 6 -> CS6;
            case 7 -> CS7;
            default -> CS8;
        };
        if (config.stopBits() == 2) {
            c |= CSTOPB;
        }
        c |= switch (config.parity()) {
            case NONE -> 0;
            case ODD -> PARENB | PARODD;
            case EVEN -> PARENB;
            case MARK -> PARENB | CMSPAR | PARODD;
            case SPACE -> PARENB | CMSPAR;
        };
        if (config.flowControl() == UartFlowControl.RTS_CTS) {
            c |= CRTSCTS;
        }
        c |= BOTHER | (BOTHER << IBSHIFT);
        set(t, C_CFLAG, c);
        int i = get(t, C_IFLAG) & ~(INPCK | IXON | IXOFF | IXANY);
        if (config.parity() != UartParity.NONE) {
            i |= INPCK; // check received parity: a bad character arrives as NUL (no PARMRK)
        }
        if (config.flowControl() == UartFlowControl.XON_XOFF) {
            i |= IXON | IXOFF;
        }
        set(t, C_IFLAG, i);
        set(t, C_ISPEED, config.baudRate());
        set(t, C_OSPEED, config.baudRate());
    }

    /** The configuration t describes (the output rate; a rate beyond int's range reads as Integer.MAX_VALUE). */
    static UartConfig decode(MemorySegment t) {
        int c = get(t, C_CFLAG);
        int dataBits = switch (c & CSIZE) {
            case CS5 -> 5;
            case CS6 -> 6;
            case CS7 -> 7;
            default -> 8;
        };
        UartParity parity;
        if ((c & PARENB) == 0) {
            parity = UartParity.NONE;
        } else if ((c & CMSPAR) != 0) {
            parity = (c & PARODD) != 0 ? UartParity.MARK : UartParity.SPACE;
        } else {
            parity = (c & PARODD) != 0 ? UartParity.ODD : UartParity.EVEN;
        }
        UartFlowControl flow = (c & CRTSCTS) != 0 ? UartFlowControl.RTS_CTS
                : (get(t, C_IFLAG) & (IXON | IXOFF)) != 0 ? UartFlowControl.XON_XOFF : UartFlowControl.NONE;
        long rate = Integer.toUnsignedLong(get(t, C_OSPEED));
        return new UartConfig(Math.clamp(rate, 1, Integer.MAX_VALUE), dataBits, parity,
                (c & CSTOPB) != 0 ? 2 : 1, flow);
    }

    /** Time on the wire of one character at t's rate and framing, in ns (at least 1). */
    static long characterNanos(MemorySegment t) {
        int c = get(t, C_CFLAG);
        int bits = 1 + 5 + ((c & CSIZE) >>> 4) + ((c & PARENB) != 0 ? 1 : 0) + ((c & CSTOPB) != 0 ? 2 : 1);
        long rate = Math.max(1, Integer.toUnsignedLong(get(t, C_OSPEED)));
        return Math.max(1, bits * 1_000_000_000L / rate);
    }
}
