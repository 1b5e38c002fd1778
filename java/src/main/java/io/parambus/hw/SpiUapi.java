package io.parambus.hw;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

/**
 * The spidev uAPI ({@code <linux/spi/spidev.h>}) declared once: {@code struct
 * spi_ioc_transfer} and its offsets, the ioctl request numbers (through {@link Ioc}).
 * {@code SpiLayoutTest} checks every value against the system headers.
 */
final class SpiUapi {
    private SpiUapi() {
    }

    /** {@code SPI_IOC_MAGIC}. */
    static final int MAGIC = 'k';

    /** {@code struct spi_ioc_transfer}: 32 bytes on every architecture. */
    static final StructLayout TRANSFER = MemoryLayout.structLayout(
            JAVA_LONG.withName("tx_buf"),
            JAVA_LONG.withName("rx_buf"),
            JAVA_INT.withName("len"),
            JAVA_INT.withName("speed_hz"),
            JAVA_SHORT.withName("delay_usecs"),
            JAVA_BYTE.withName("bits_per_word"),
            JAVA_BYTE.withName("cs_change"),
            JAVA_BYTE.withName("tx_nbits"),
            JAVA_BYTE.withName("rx_nbits"),
            JAVA_BYTE.withName("word_delay_usecs"),
            JAVA_BYTE.withName("pad")).withName("spi_ioc_transfer");
    static final long SIZE = TRANSFER.byteSize();
    static final long TX_BUF = TRANSFER.byteOffset(groupElement("tx_buf"));
    static final long RX_BUF = TRANSFER.byteOffset(groupElement("rx_buf"));
    static final long LEN = TRANSFER.byteOffset(groupElement("len"));
    static final long SPEED_HZ = TRANSFER.byteOffset(groupElement("speed_hz"));
    static final long DELAY_USECS = TRANSFER.byteOffset(groupElement("delay_usecs"));
    static final long BITS_PER_WORD = TRANSFER.byteOffset(groupElement("bits_per_word"));
    static final long CS_CHANGE = TRANSFER.byteOffset(groupElement("cs_change"));
    static final long TX_NBITS = TRANSFER.byteOffset(groupElement("tx_nbits"));
    static final long RX_NBITS = TRANSFER.byteOffset(groupElement("rx_nbits"));
    static final long WORD_DELAY_USECS = TRANSFER.byteOffset(groupElement("word_delay_usecs"));

    static final long RD_MODE = Ioc.ior(MAGIC, 1, 1), WR_MODE = Ioc.iow(MAGIC, 1, 1);
    static final long RD_LSB_FIRST = Ioc.ior(MAGIC, 2, 1), WR_LSB_FIRST = Ioc.iow(MAGIC, 2, 1);
    static final long RD_BITS_PER_WORD = Ioc.ior(MAGIC, 3, 1), WR_BITS_PER_WORD = Ioc.iow(MAGIC, 3, 1);
    static final long RD_MAX_SPEED_HZ = Ioc.ior(MAGIC, 4, 4), WR_MAX_SPEED_HZ = Ioc.iow(MAGIC, 4, 4);
    static final long RD_MODE32 = Ioc.ior(MAGIC, 5, 4), WR_MODE32 = Ioc.iow(MAGIC, 5, 4);

    /**
     * The most transfers of one message: {@code SPI_IOC_MESSAGE(n)} encodes n × 32 bytes in
     * the request's 14-bit size field (the uAPI's limit, not a driver's).
     */
    static final int MAX_TRANSFERS = (int) (((1 << 14) - 1) / SIZE);

    /** {@code SPI_IOC_MESSAGE(n)}. */
    static long message(int n) {
        return Ioc.iow(MAGIC, 0, n * SIZE);
    }
}
