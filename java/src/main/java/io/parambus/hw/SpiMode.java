package io.parambus.hw;

import java.util.StringJoiner;

/**
 * The bits of the 32-bit SPI mode ({@code SPI_IOC_WR_MODE32}, the kernel's
 * {@code SPI_*} of {@code <linux/spi/spi.h>}), for {@link SpiDevice#setMode(int)}: a
 * clock mode ({@link #MODE_0}..{@link #MODE_3}) or'ed with the other flags. Which of them
 * a device accepts is the controller's business: the kernel refuses the others with
 * {@code EINVAL} and keeps the previous mode. This class holds constants only.
 */
public final class SpiMode {
    private SpiMode() {
    }

    /** Clock phase: sample on the trailing edge. */
    public static final int CPHA = 0x1;
    /** Clock polarity: idle high. */
    public static final int CPOL = 0x2;
    /** CPOL 0, CPHA 0. */
    public static final int MODE_0 = 0;
    /** CPOL 0, CPHA 1. */
    public static final int MODE_1 = CPHA;
    /** CPOL 1, CPHA 0. */
    public static final int MODE_2 = CPOL;
    /** CPOL 1, CPHA 1. */
    public static final int MODE_3 = CPOL | CPHA;
    /** Chip select active high. */
    public static final int CS_HIGH = 0x4;
    /** Least significant bit first. */
    public static final int LSB_FIRST = 0x8;
    /** MOSI and MISO shared (3-wire). */
    public static final int THREE_WIRE = 0x10;
    /** Loopback in the controller. */
    public static final int LOOP = 0x20;
    /** No chip select (one device on the bus). */
    public static final int NO_CS = 0x40;
    /** The device pulls READY low to pause. */
    public static final int READY = 0x80;
    /** Transmit on 2 wires. */
    public static final int TX_DUAL = 0x100;
    /** Transmit on 4 wires. */
    public static final int TX_QUAD = 0x200;
    /** Receive on 2 wires. */
    public static final int RX_DUAL = 0x400;
    /** Receive on 4 wires. */
    public static final int RX_QUAD = 0x800;
    /** Toggle chip select after each word. */
    public static final int CS_WORD = 0x1000;
    /** Transmit on 8 wires. */
    public static final int TX_OCTAL = 0x2000;
    /** Receive on 8 wires. */
    public static final int RX_OCTAL = 0x4000;
    /** High-impedance turnaround (3-wire). */
    public static final int THREE_WIRE_HIZ = 0x8000;
    /** Flip CPHA on receive-only transfers. */
    public static final int RX_CPHA_FLIP = 0x10000;

    private static final String[] NAMES = {"CPHA", "CPOL", "CS_HIGH", "LSB_FIRST", "THREE_WIRE", "LOOP", "NO_CS",
            "READY", "TX_DUAL", "TX_QUAD", "RX_DUAL", "RX_QUAD", "CS_WORD", "TX_OCTAL", "RX_OCTAL", "THREE_WIRE_HIZ",
            "RX_CPHA_FLIP"};

    /** The mode's flags by name, e.g. {@code "0x00000a0b CPHA|CPOL|LSB_FIRST|TX_QUAD|RX_QUAD"}. */
    public static String toString(int mode) {
        StringJoiner j = new StringJoiner("|");
        for (int bit = 0; bit < 32; bit++) {
            if ((mode & (1 << bit)) != 0) {
                j.add(bit < NAMES.length ? NAMES[bit] : "bit" + bit);
            }
        }
        return String.format("0x%08x %s", mode, mode == 0 ? "MODE_0" : j.toString());
    }
}
