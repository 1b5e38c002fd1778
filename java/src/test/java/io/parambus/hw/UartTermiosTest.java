package io.parambus.hw;

import static io.parambus.hw.UartTermios.*;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * The encoding of a {@link UartConfig} into struct termios2 and back, on a segment (no
 * tty): the bits each setting sets and clears, and every framing's round trip.
 */
class UartTermiosTest {
    @Test
    void everyConfigurationRoundTrips() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment t = a.allocate(TERMIOS2);
            for (int rate : new int[] {1, 50, 9600, 31_250, 250_000, 1_000_000, Integer.MAX_VALUE}) {
                for (int data = 5; data <= 8; data++) {
                    for (UartParity parity : UartParity.values()) {
                        for (int stop = 1; stop <= 2; stop++) {
                            for (UartFlowControl flow : UartFlowControl.values()) {
                                UartConfig c = new UartConfig(rate, data, parity, stop, flow);
                                t.fill((byte) 0xff); // every bit set before: encode must clear what it does not want
                                encode(t, c);
                                assertEquals(c, decode(t));
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void theBitsOfEachSetting() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment t = a.allocate(TERMIOS2);
            encode(t, new UartConfig(9600, 7, UartParity.EVEN, 2, UartFlowControl.NONE));
            assertEquals(CS7 | PARENB | CSTOPB | BOTHER | BOTHER << IBSHIFT, t.get(JAVA_INT, C_CFLAG));
            assertEquals(INPCK, t.get(JAVA_INT, C_IFLAG));
            assertEquals(9600, t.get(JAVA_INT, C_ISPEED));
            assertEquals(9600, t.get(JAVA_INT, C_OSPEED));
            t.fill((byte) 0);
            encode(t, new UartConfig(250_000, 8, UartParity.MARK, 1, UartFlowControl.RTS_CTS));
            assertEquals(CS8 | PARENB | PARODD | CMSPAR | CRTSCTS | BOTHER | BOTHER << IBSHIFT,
                    t.get(JAVA_INT, C_CFLAG));
            t.fill((byte) 0);
            encode(t, new UartConfig(31_250, 5, UartParity.SPACE, 1, UartFlowControl.XON_XOFF));
            assertEquals(CS5 | PARENB | CMSPAR | BOTHER | BOTHER << IBSHIFT, t.get(JAVA_INT, C_CFLAG));
            assertEquals(INPCK | IXON | IXOFF, t.get(JAVA_INT, C_IFLAG));
            t.fill((byte) 0);
            encode(t, UartConfig.of(115_200).withParity(UartParity.ODD));
            assertEquals(CS8 | PARENB | PARODD | BOTHER | BOTHER << IBSHIFT, t.get(JAVA_INT, C_CFLAG));
        }
    }

    @Test
    void rawModeClearsLineEditingEchoSignalsAndTranslation() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment t = a.allocate(TERMIOS2);
            t.fill((byte) 0xff);
            makeRaw(t);
            assertEquals(0, t.get(JAVA_INT, C_LFLAG) & (ECHO | ECHOE | ECHOK | ECHONL | ICANON | ISIG | IEXTEN));
            assertEquals(0, t.get(JAVA_INT, C_OFLAG) & OPOST);
            assertEquals(0, t.get(JAVA_INT, C_IFLAG) & (IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL
                    | IXON | IXOFF | IXANY | INPCK | IUCLC | IMAXBEL));
            assertEquals(CLOCAL | CREAD, t.get(JAVA_INT, C_CFLAG) & (CLOCAL | CREAD));
            assertEquals(1, t.get(JAVA_BYTE, C_CC + VMIN));
            assertEquals(0, t.get(JAVA_BYTE, C_CC + VTIME));
        }
    }

    @Test
    void characterTimeFollowsRateAndFraming() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment t = a.allocate(TERMIOS2);
            encode(t, UartConfig.of(9600)); // 10 bits
            assertEquals(10 * 1_000_000_000L / 9600, characterNanos(t));
            encode(t, new UartConfig(9600, 7, UartParity.EVEN, 2, UartFlowControl.NONE)); // 11 bits
            assertEquals(11 * 1_000_000_000L / 9600, characterNanos(t));
            assertEquals(11, new UartConfig(9600, 7, UartParity.EVEN, 2, UartFlowControl.NONE).bitsPerCharacter());
        }
    }
}
