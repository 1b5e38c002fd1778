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
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * What the host can check of the I2C classes without an adapter: arguments refused
 * before any system call, the errors of files that are not i2c-dev nodes (ENOTTY) or do
 * not exist (ENOENT) with messages naming the operation, the file and the errno, no
 * descriptor left behind by a failed open, and the functionality bits by name. The
 * transfers themselves are tested against i2c-stub and the mock adapter in the VM
 * (tests/kernel/java/io/parambus/hw/vm/I2cTest.java).
 */
class I2cArgumentsTest {
    private static long openFds() throws IOException {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    @Test
    void aFileThatIsNotAnI2cNodeIsEnotty() {
        HwException e = assertThrows(HwException.class, () -> I2cBus.open("/dev/null"));
        assertEquals(25, e.errnoValue());
        assertEquals("ENOTTY", e.errno());
        assertEquals("/dev/null", e.device());
        assertEquals("I2C open", e.operation());
        assertTrue(e.getMessage().startsWith("I2C open on /dev/null: ENOTTY ("), e.getMessage());
        HwException d = assertThrows(HwException.class, () -> I2cDevice.open("/dev/null", 0x48));
        assertEquals("ENOTTY", d.errno());
    }

    @Test
    void aMissingNodeIsEnoent() {
        HwException e = assertThrows(HwException.class, () -> I2cBus.open("/dev/i2c-does-not-exist"));
        assertEquals("ENOENT", e.errno());
        assertTrue(e.getMessage().contains("/dev/i2c-does-not-exist"), e.getMessage());
        assertEquals("ENOENT", assertThrows(HwException.class, () -> I2cBus.open(9999)).errno());
        HwException n = assertThrows(HwException.class, () -> I2cBus.openByName("no adapter has this name"));
        assertEquals("ENOENT", n.errno());
        assertTrue(n.getMessage().contains("no adapter has this name") || n.getMessage().contains("NoSuchFile"),
                n.getMessage());
    }

    @Test
    void failedOpensLeaveNoDescriptor() throws IOException {
        long before = openFds();
        for (int i = 0; i < 200; i++) {
            assertThrows(HwException.class, () -> I2cDevice.open("/dev/null", 0x48));
            assertThrows(HwException.class, () -> I2cBus.open("/dev/zero"));
        }
        assertEquals(before, openFds());
    }

    @Test
    void addressesAreCheckedBeforeTheNodeIsOpened() {
        // a missing node would say ENOENT: the argument is refused first
        String missing = "/dev/i2c-does-not-exist";
        assertThrows(IllegalArgumentException.class, () -> I2cDevice.open(missing, 0x80));
        assertThrows(IllegalArgumentException.class, () -> I2cDevice.open(missing, -1));
        assertThrows(IllegalArgumentException.class,
                () -> I2cDevice.open(missing, 0x400, I2cDevice.Option.TEN_BIT));
        assertEquals("ENOENT", assertThrows(HwException.class,
                () -> I2cDevice.open(missing, 0x2a5, I2cDevice.Option.TEN_BIT)).errno());
        assertThrows(IllegalArgumentException.class, () -> I2cBus.open(-1));
        assertThrows(NullPointerException.class, () -> I2cBus.open((String) null));
    }

    @Test
    void messagesRefuseWhatI2cDevRefuses() {
        byte[] b = new byte[4];
        assertThrows(IllegalArgumentException.class, () -> I2cMessage.write(0x400, b));
        assertThrows(IllegalArgumentException.class, () -> I2cMessage.read(-1, b));
        assertThrows(IllegalArgumentException.class, () -> I2cMessage.write(0x48, new byte[8193]));
        I2cMessage.write(0x48, new byte[8192]);
        assertThrows(IndexOutOfBoundsException.class, () -> I2cMessage.write(0x48, b, 2, 3));
        assertThrows(IndexOutOfBoundsException.class, () -> I2cMessage.read(0x48, b, -1, 1));
        assertThrows(IllegalArgumentException.class, () -> I2cMessage.readBlock(0x48, new byte[32]));
        assertThrows(IllegalArgumentException.class, () -> I2cMessage.write(0x48, b).withFlags(I2cMessage.READ));
        assertThrows(IllegalArgumentException.class, () -> I2cMessage.read(0x48, b).withFlags(I2cMessage.RECV_LEN));
        try (Arena a = Arena.ofConfined()) {
            assertThrows(IllegalArgumentException.class, () -> I2cMessage.read(0x48, a.allocate(8193)));
            MemorySegment seg = a.allocate(3);
            I2cMessage m = I2cMessage.read(0x2a5, seg).tenBit().withFlags(I2cMessage.NO_START);
            assertEquals(I2cMessage.READ | I2cMessage.TEN_BIT | I2cMessage.NO_START, m.flags());
            assertEquals(3, m.length());
            assertTrue(m.isRead());
            assertEquals("read 0x2a5 flags=0x4011 len=3", m.toString());
        }
        I2cMessage blk = I2cMessage.readBlock(0x48, new byte[40]);
        assertEquals(I2cMessage.READ | I2cMessage.RECV_LEN, blk.flags());
        assertEquals(I2cMessage.BLOCK_BUFFER_LENGTH, blk.length());
        assertFalse(I2cMessage.write(0x48, b).isRead());
    }

    @Test
    void functionalityBitsByName() {
        I2cFunctionality stub = new I2cFunctionality(0x0c7f0000L); // i2c-stub's
        assertFalse(stub.has(I2cFunction.I2C));
        assertFalse(stub.has(I2cFunction.SMBUS_PEC));
        assertTrue(stub.has(I2cFunction.SMBUS_READ_BYTE_DATA));
        assertTrue(stub.has(I2cFunction.SMBUS_WRITE_I2C_BLOCK));
        assertEquals(EnumSet.of(I2cFunction.SMBUS_QUICK, I2cFunction.SMBUS_READ_BYTE, I2cFunction.SMBUS_WRITE_BYTE,
                I2cFunction.SMBUS_READ_BYTE_DATA, I2cFunction.SMBUS_WRITE_BYTE_DATA, I2cFunction.SMBUS_READ_WORD_DATA,
                I2cFunction.SMBUS_WRITE_WORD_DATA, I2cFunction.SMBUS_READ_I2C_BLOCK,
                I2cFunction.SMBUS_WRITE_I2C_BLOCK), stub.functions());
        assertTrue(stub.toString().startsWith("0x0c7f0000 [SMBUS_QUICK,"), stub.toString());
        I2cFunctionality mock = new I2cFunctionality(0x0fff800bL); // the mock adapter's
        assertTrue(mock.has(I2cFunction.I2C) && mock.has(I2cFunction.TEN_BIT_ADDRESS)
                && mock.has(I2cFunction.SMBUS_PEC) && mock.has(I2cFunction.SMBUS_BLOCK_PROC_CALL));
        assertFalse(mock.has(I2cFunction.NOSTART));
    }

    @Test
    void errnoNamesOfTheBus() {
        assertEquals("EMSGSIZE", new HwException("SPI transfer", "/dev/spidev0.0", 90).errno());
        assertEquals("ESHUTDOWN", new HwException("SPI transfer", "/dev/spidev0.0", 108).errno());
        assertEquals("EBADMSG", new HwException("SMBus read byte data", "/dev/i2c-1", 74).errno());
    }
}
