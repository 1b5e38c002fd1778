package io.parambus.hw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * What the host can check of the SPI classes without a controller: arguments refused
 * before any system call, the errors of files that are not spidev nodes (ENOTTY) or do
 * not exist (ENOENT), no descriptor left behind by a failed open, and the mode bits by
 * name. Transfers, settings and prepared messages are tested against the mock controller
 * in the VM (tests/kernel/java/io/parambus/hw/vm/SpiTest.java).
 */
class SpiArgumentsTest {
    private static long openFds() throws IOException {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    @Test
    void aFileThatIsNotASpidevNodeIsEnotty() throws IOException {
        long before = openFds();
        for (int i = 0; i < 100; i++) {
            HwException e = assertThrows(HwException.class, () -> SpiDevice.open("/dev/null"));
            assertEquals("ENOTTY", e.errno());
            assertEquals("SPI open", e.operation());
            assertTrue(e.getMessage().startsWith("SPI open on /dev/null: ENOTTY ("), e.getMessage());
        }
        assertEquals(before, openFds());
    }

    @Test
    void aMissingNodeIsEnoent() {
        HwException e = assertThrows(HwException.class, () -> SpiDevice.open(9999, 7));
        assertEquals("ENOENT", e.errno());
        assertEquals("/dev/spidev9999.7", e.device());
        assertThrows(IllegalArgumentException.class, () -> SpiDevice.open(-1, 0));
        assertThrows(IllegalArgumentException.class, () -> SpiDevice.open(0, -1));
        assertThrows(NullPointerException.class, () -> SpiDevice.open(null));
    }

    @Test
    void transfersRefuseWhatSpidevCannotTake() {
        assertThrows(IllegalArgumentException.class, () -> SpiTransfer.write(new byte[0]));
        assertThrows(IllegalArgumentException.class, () -> SpiTransfer.read(0));
        assertThrows(IllegalArgumentException.class, () -> SpiTransfer.duplex(new byte[2], new byte[3]));
        assertThrows(IndexOutOfBoundsException.class, () -> SpiTransfer.write(new byte[2], 1, 2));
        SpiTransfer t = SpiTransfer.duplex(4);
        assertThrows(IllegalArgumentException.class, () -> t.bitsPerWord(256));
        assertThrows(IllegalArgumentException.class, () -> t.delayUsecs(65536));
        assertThrows(IllegalArgumentException.class, () -> t.wordDelayUsecs(256));
        assertThrows(IllegalArgumentException.class, () -> t.txNbits(3));
        assertThrows(IllegalArgumentException.class, () -> t.rxNbits(16));
        assertThrows(IllegalArgumentException.class, () -> t.speedHz(-1));
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ro = a.allocate(4).asReadOnly();
            assertThrows(IllegalArgumentException.class, () -> SpiTransfer.read(ro));
            assertThrows(IllegalArgumentException.class, () -> SpiTransfer.duplex(a.allocate(4), ro));
            assertThrows(IllegalArgumentException.class, () -> SpiTransfer.duplex(a.allocate(4), a.allocate(5)));
            SpiTransfer w = SpiTransfer.write(ro); // sending from a read-only segment is fine
            assertTrue(w.sends() && !w.receives());
        }
        SpiTransfer s = SpiTransfer.duplex(3).speedHz(500_000).delayUsecs(10).csChange(true).bitsPerWord(16)
                .wordDelayUsecs(2).txNbits(4).rxNbits(2);
        assertEquals("SpiTransfer[3 bytes tx rx speed=500000 bpw=16 delay=10us cs_change word_delay=2us tx_nbits=4"
                + " rx_nbits=2]", s.toString());
        assertEquals(0, t.speedHz, "withers return a new transfer");
        assertFalse(SpiTransfer.read(new byte[1]).sends());
    }

    @Test
    void modeBitsByName() {
        assertEquals("0x00000000 MODE_0", SpiMode.toString(SpiMode.MODE_0));
        assertEquals("0x00000a0b CPHA|CPOL|LSB_FIRST|TX_QUAD|RX_QUAD",
                SpiMode.toString(SpiMode.MODE_3 | SpiMode.LSB_FIRST | SpiMode.TX_QUAD | SpiMode.RX_QUAD));
        assertEquals("0x00020080 READY|bit17", SpiMode.toString(SpiMode.READY | 0x20000));
    }
}
