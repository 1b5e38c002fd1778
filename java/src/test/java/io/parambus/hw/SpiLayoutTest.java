package io.parambus.hw;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Everything the SPI classes declare by hand — {@code struct spi_ioc_transfer}, the
 * ioctl numbers (SPI_IOC_MESSAGE(n) for several n and the largest n the uAPI encodes),
 * the mode bits — is what {@code <linux/spi/spidev.h>} says (tests/java/c/uapi-layout.c,
 * section spi): every line of that section must be matched here, and nothing else.
 */
class SpiLayoutTest {
    @Test
    void transferIoctlsAndModeBitsAreTheKernels() throws Exception {
        Map<String, Long> j = new TreeMap<>();
        j.put("spi_ioc_transfer_size", SpiUapi.SIZE);
        j.put("spi_ioc_transfer_tx_buf", SpiUapi.TX_BUF);
        j.put("spi_ioc_transfer_rx_buf", SpiUapi.RX_BUF);
        j.put("spi_ioc_transfer_len", SpiUapi.LEN);
        j.put("spi_ioc_transfer_speed_hz", SpiUapi.SPEED_HZ);
        j.put("spi_ioc_transfer_delay_usecs", SpiUapi.DELAY_USECS);
        j.put("spi_ioc_transfer_bits_per_word", SpiUapi.BITS_PER_WORD);
        j.put("spi_ioc_transfer_cs_change", SpiUapi.CS_CHANGE);
        j.put("spi_ioc_transfer_tx_nbits", SpiUapi.TX_NBITS);
        j.put("spi_ioc_transfer_rx_nbits", SpiUapi.RX_NBITS);
        j.put("spi_ioc_transfer_word_delay_usecs", SpiUapi.WORD_DELAY_USECS);
        j.put("spi_ioc_transfer_pad", SpiUapi.TRANSFER.byteOffset(
                java.lang.foreign.MemoryLayout.PathElement.groupElement("pad")));
        j.put("SPI_IOC_MAGIC", (long) SpiUapi.MAGIC);
        j.put("SPI_IOC_RD_MODE", SpiUapi.RD_MODE);
        j.put("SPI_IOC_WR_MODE", SpiUapi.WR_MODE);
        j.put("SPI_IOC_RD_LSB_FIRST", SpiUapi.RD_LSB_FIRST);
        j.put("SPI_IOC_WR_LSB_FIRST", SpiUapi.WR_LSB_FIRST);
        j.put("SPI_IOC_RD_BITS_PER_WORD", SpiUapi.RD_BITS_PER_WORD);
        j.put("SPI_IOC_WR_BITS_PER_WORD", SpiUapi.WR_BITS_PER_WORD);
        j.put("SPI_IOC_RD_MAX_SPEED_HZ", SpiUapi.RD_MAX_SPEED_HZ);
        j.put("SPI_IOC_WR_MAX_SPEED_HZ", SpiUapi.WR_MAX_SPEED_HZ);
        j.put("SPI_IOC_RD_MODE32", SpiUapi.RD_MODE32);
        j.put("SPI_IOC_WR_MODE32", SpiUapi.WR_MODE32);
        for (int n : new int[] {1, 2, 42, 511}) {
            j.put("SPI_IOC_MESSAGE(" + n + ")", SpiUapi.message(n));
        }
        j.put("spi_max_transfers", (long) SpiUapi.MAX_TRANSFERS);
        j.put("SPI_CPHA", (long) SpiMode.CPHA);
        j.put("SPI_CPOL", (long) SpiMode.CPOL);
        j.put("SPI_MODE_0", (long) SpiMode.MODE_0);
        j.put("SPI_MODE_1", (long) SpiMode.MODE_1);
        j.put("SPI_MODE_2", (long) SpiMode.MODE_2);
        j.put("SPI_MODE_3", (long) SpiMode.MODE_3);
        j.put("SPI_CS_HIGH", (long) SpiMode.CS_HIGH);
        j.put("SPI_LSB_FIRST", (long) SpiMode.LSB_FIRST);
        j.put("SPI_3WIRE", (long) SpiMode.THREE_WIRE);
        j.put("SPI_LOOP", (long) SpiMode.LOOP);
        j.put("SPI_NO_CS", (long) SpiMode.NO_CS);
        j.put("SPI_READY", (long) SpiMode.READY);
        j.put("SPI_TX_DUAL", (long) SpiMode.TX_DUAL);
        j.put("SPI_TX_QUAD", (long) SpiMode.TX_QUAD);
        j.put("SPI_RX_DUAL", (long) SpiMode.RX_DUAL);
        j.put("SPI_RX_QUAD", (long) SpiMode.RX_QUAD);
        j.put("SPI_CS_WORD", (long) SpiMode.CS_WORD);
        j.put("SPI_TX_OCTAL", (long) SpiMode.TX_OCTAL);
        j.put("SPI_RX_OCTAL", (long) SpiMode.RX_OCTAL);
        j.put("SPI_3WIRE_HIZ", (long) SpiMode.THREE_WIRE_HIZ);
        j.put("SPI_RX_CPHA_FLIP", (long) SpiMode.RX_CPHA_FLIP);
        UapiLayouts.assertSame("spi", j);
    }
}
