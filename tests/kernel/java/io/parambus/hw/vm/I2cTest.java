package io.parambus.hw.vm;

import io.parambus.hw.HwException;
import io.parambus.hw.I2cBus;
import io.parambus.hw.I2cDevice;
import io.parambus.hw.I2cFunction;
import io.parambus.hw.I2cMessage;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * io.parambus.hw's I2C against i2c-stub (an SMBus-only adapter) and the project's mock
 * adapter (tests/kernel/ENVIRONMENT.md section 4), whose debugfs {@code last_xfer}
 * records every message as it went on the wire: "a register write is one message",
 * repeated starts, 10-bit addresses and PEC bytes are checked where they happen.
 * Register files of the mock: 0x48 reg[n] = n, 0x49 reg[n] = 0xff - n, 0x51 a 16-bit
 * addressed EEPROM mem[n] = n &amp; 0xff, 10-bit 0x2a5 reg[n] = n. The harness resets
 * the mock and reloads i2c-stub before this program; each case restores what it changes.
 *
 * <p>The million-call memory test is {@link I2cMemoryTest} (a program of its own, for
 * its time).
 */
public class I2cTest {
    public static void main(String[] args) {
        VmSuite.main(I2cTest.class, args);
    }

    static final String DBG = "/sys/kernel/debug/pbus-mock-i2c";
    static final String STUB = "SMBus stub driver", MOCK = "pbus-mock-i2c";
    private static final HexFormat HEX = HexFormat.ofDelimiter(" ");

    static String lastXfer() {
        return Kenv.read(DBG + "/last_xfer") + "\n";
    }

    static void contains(String text, String part, String what) {
        VmSuite.check(text.contains(part), "%s: no '%s' in:\n%s", what, part, text);
    }

    /** Runs r, which must fail with errno name; returns the exception. */
    static HwException fails(String errno, Runnable r, String what) {
        try {
            r.run();
        } catch (HwException e) {
            VmSuite.equal(errno, e.errno(), what + " (" + e.getMessage() + ")");
            return e;
        }
        throw new AssertionError(what + ": no error, expected " + errno);
    }

    static byte[] bytes(int... v) {
        byte[] b = new byte[v.length];
        for (int i = 0; i < v.length; i++) {
            b[i] = (byte) v[i];
        }
        return b;
    }

    private static int crc8(int crc, int b) {
        crc ^= b & 0xff;
        for (int i = 0; i < 8; i++) {
            crc = (crc & 0x80) != 0 ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
        }
        return crc;
    }

    /** SMBus PEC of the bytes on the wire (address bytes included). */
    static int pec(int... wire) {
        int c = 0;
        for (int b : wire) {
            c = crc8(c, b);
        }
        return c;
    }

    // ---- i2c-stub: SMBus only ----

    @VmSuite.Case
    public void stub_functionality_and_open_by_name_and_number() throws java.io.IOException {
        String path = I2cBus.pathOfAdapter(STUB);
        VmSuite.equal(java.nio.file.Path.of("/run/pbus/i2c-stub").toRealPath().toString(), path, "path by name");
        try (I2cBus bus = I2cBus.openByName(STUB)) {
            VmSuite.equal(path, bus.path(), "bus path by name");
            VmSuite.equal(0x0c7f0000L, bus.functionality().mask(), "i2c-stub I2C_FUNCS");
            VmSuite.check(!bus.functionality().has(I2cFunction.I2C), "i2c-stub has no plain I2C");
        }
        int n = Integer.parseInt(path.substring("/dev/i2c-".length()));
        try (I2cBus bus = I2cBus.open(n); I2cDevice d = bus.device(0x50)) {
            VmSuite.equal(path, bus.path(), "bus path by number");
            VmSuite.equal(0x50, d.address(), "address");
            VmSuite.equal(0x0c7f0000L, d.functionality().mask(), "I2C_FUNCS through the device");
        }
    }

    @VmSuite.Case
    public void stub_every_smbus_call_it_has() {
        try (I2cDevice d = I2cDevice.open(I2cBus.pathOfAdapter(STUB), 0x50)) {
            d.smbusQuick(false);
            d.smbusWriteByteData(0x10, 0xab);
            VmSuite.equal(0xab, d.smbusReadByteData(0x10), "byte data");
            d.smbusWriteWordData(0x20, 0xbeef);
            VmSuite.equal(0xbeef, d.smbusReadWordData(0x20), "word data");
            VmSuite.equal(0xef, d.smbusReadByteData(0x20), "word data is little-endian");
            d.smbusWriteI2cBlockData(0x30, bytes(1, 2, 3, 4, 5));
            byte[] out = new byte[5];
            VmSuite.equal(5, d.smbusReadI2cBlockData(0x30, out), "I2C block read count");
            VmSuite.equal(HEX.formatHex(bytes(1, 2, 3, 4, 5)), HEX.formatHex(out), "I2C block read");
            d.smbusWriteByte(0x31); // the stub's pointer
            VmSuite.equal(2, d.smbusReadByte(), "receive byte after send byte");
            // what the stub has not: reported, not hidden
            HwException e = fails("EOPNOTSUPP", () -> d.smbusReadBlockData(0x30, new byte[32]), "block read");
            VmSuite.check(e.getMessage().startsWith("SMBus read block data on " + d.path() + ": EOPNOTSUPP"),
                    "message: %s", e.getMessage());
        }
    }

    @VmSuite.Case
    public void stub_register_helpers_use_the_same_smbus_bytes() {
        try (I2cDevice d = I2cDevice.open(I2cBus.pathOfAdapter(STUB), 0x50)) {
            byte[] data = bytes(0xde, 0xad, 0xbe, 0xef);
            d.writeRegister(0x40, data); // I2C block write: [0x40 de ad be ef], one message
            VmSuite.equal(HEX.formatHex(data), HEX.formatHex(d.readRegister(0x40, 4)), "register read back");
            d.writeRegister(0x44, (byte) 0x5a); // write byte data
            VmSuite.equal(0x5a, d.smbusReadByteData(0x44), "one-byte register write");
            byte[] one = new byte[1];
            d.readRegister(0x41, one); // read byte data
            VmSuite.equal(0xad, one[0] & 0xff, "one-byte register read");
            fails("EOPNOTSUPP", () -> d.writeRegister(0, new byte[33]), "33-byte register write on SMBus only");
            fails("EOPNOTSUPP", () -> d.readRegister(0, new byte[33]), "33-byte register read on SMBus only");
            fails("EOPNOTSUPP", () -> d.transfer(I2cMessage.read(0x50, one)), "I2C_RDWR on i2c-stub");
            fails("EOPNOTSUPP", () -> d.setPec(true), "PEC on i2c-stub");
            VmSuite.check(!d.pec(), "PEC stays off");
        }
        fails("EOPNOTSUPP", () -> I2cDevice.open(I2cBus.pathOfAdapter(STUB), 0x150, I2cDevice.Option.TEN_BIT),
                "10-bit address on i2c-stub");
    }

    @VmSuite.Case
    public void stub_absent_address_is_enodev() {
        try (I2cDevice d = I2cDevice.open(I2cBus.pathOfAdapter(STUB), 0x51)) {
            HwException e = fails("ENODEV", () -> d.smbusReadByteData(0x00), "read at an absent address");
            VmSuite.check(e.getMessage().contains("address 0x51, command 0x00"), "message: %s", e.getMessage());
            fails("ENODEV", () -> d.smbusWriteByteData(0, 1), "write at an absent address");
        }
    }

    // ---- the mock adapter ----

    static I2cDevice mock(int address, I2cDevice.Option... options) {
        return I2cDevice.open(I2cBus.pathOfAdapter(MOCK), address, options);
    }

    @VmSuite.Case
    public void mock_functionality_and_settings() {
        try (I2cDevice d = mock(0x48)) {
            VmSuite.equal(0x0fff800bL, d.functionality().mask(), "mock I2C_FUNCS");
            VmSuite.check(d.functionality().has(I2cFunction.TEN_BIT_ADDRESS), "10-bit");
            VmSuite.check(!d.functionality().has(I2cFunction.NOSTART), "no NOSTART");
            d.setTimeoutMillis(250);
            d.setRetries(2);
            VmSuite.equal(0x03, d.smbusReadByteData(0x03), "a read after the settings");
        }
    }

    @VmSuite.Case
    public void register_write_is_one_message() {
        // Pi4J: a register write split into two messages with a repeated start.
        try (I2cDevice d = mock(0x48)) {
            d.writeRegister(0x10, (byte) 0x11, (byte) 0x22, (byte) 0x33);
            String x = lastXfer();
            contains(x, "kind=i2c ret=1 nmsgs=1\n", "last_xfer");
            contains(x, "msg=0 addr=0x48 flags=0x0000 len=4 data=10 11 22 33\n", "one message: reg + data");
            VmSuite.check(!x.contains("msg=1"), "a second message:\n%s", x);
            contains(Kenv.read(DBG + "/0x48/regs"), "10: 11 22 33 13 14", "registers");
            // the same from a native segment, and a long one (one message of 1 + 200 bytes)
            try (Arena a = Arena.ofConfined()) {
                MemorySegment s = a.allocate(200);
                for (int i = 0; i < 200; i++) {
                    s.set(ValueLayout.JAVA_BYTE, i, (byte) (0x80 + i));
                }
                d.writeRegister(0x20, s);
            }
            x = lastXfer();
            contains(x, "kind=i2c ret=1 nmsgs=1\n", "long write");
            contains(x, "msg=0 addr=0x48 flags=0x0000 len=201 data=20 80 81 82", "long write: one message");
            contains(Kenv.read(DBG + "/0x48/regs"), "20: 80 81 82 83", "registers after the long write");
            Kenv.write(DBG + "/0x48/regs", "reset");
        }
    }

    @VmSuite.Case
    public void register_read_is_write_then_read_with_repeated_start() {
        try (I2cDevice d = mock(0x49)) {
            byte[] out = new byte[3];
            d.readRegister(0x05, out);
            VmSuite.equal("fa f9 f8", HEX.formatHex(out), "bytes read");
            String x = lastXfer();
            contains(x, "kind=i2c ret=2 nmsgs=2\n", "one transaction of two messages");
            contains(x, "msg=0 addr=0x49 flags=0x0000 len=1 data=05\n", "[W: reg]");
            contains(x, "msg=1 addr=0x49 flags=0x0001 len=3 data=fa f9 f8\n", "[R: 3]");
            // into a native segment, filled by the kernel in place
            try (Arena a = Arena.ofConfined()) {
                MemorySegment s = a.allocate(2);
                d.readRegister(0x10, s);
                VmSuite.equal(0xef, s.get(ValueLayout.JAVA_BYTE, 0) & 0xff, "segment byte 0");
                VmSuite.equal(0xee, s.get(ValueLayout.JAVA_BYTE, 1) & 0xff, "segment byte 1");
            }
        }
    }

    @VmSuite.Case
    public void rdwr_several_messages_any_addresses() {
        try (I2cBus bus = I2cBus.openByName(MOCK)) {
            byte[] r1 = new byte[2], r2 = new byte[2];
            I2cMessage[] m = {I2cMessage.write(0x48, bytes(0x20)), I2cMessage.read(0x48, r1),
                    I2cMessage.write(0x49, bytes(0x20)), I2cMessage.read(0x49, r2)};
            bus.transfer(m);
            VmSuite.equal("20 21", HEX.formatHex(r1), "0x48");
            VmSuite.equal("df de", HEX.formatHex(r2), "0x49");
            String x = lastXfer();
            contains(x, "kind=i2c ret=4 nmsgs=4\n", "four messages, one transaction");
            contains(x, "msg=2 addr=0x49 flags=0x0000 len=1 data=20\n", "third message");
            // the same kept messages again, on a shorter count
            Arrays.fill(r1, (byte) 0);
            bus.transfer(m, 2);
            VmSuite.equal("20 21", HEX.formatHex(r1), "again");
            contains(lastXfer(), "kind=i2c ret=2 nmsgs=2\n", "two of the four");

            // 16-bit EEPROM pointer, write then read, and a 10-bit address, in one transaction
            byte[] mem = new byte[4], ten = new byte[2];
            try (Arena a = Arena.ofConfined()) {
                MemorySegment ptr = a.allocate(2);
                ptr.set(ValueLayout.JAVA_BYTE, 0, (byte) 0x01);
                ptr.set(ValueLayout.JAVA_BYTE, 1, (byte) 0x02);
                bus.transfer(I2cMessage.write(0x51, ptr), I2cMessage.read(0x51, mem),
                        I2cMessage.write(0x2a5, bytes(0x33)).tenBit(), I2cMessage.read(0x2a5, ten).tenBit());
            }
            VmSuite.equal("02 03 04 05", HEX.formatHex(mem), "EEPROM at 0x0102");
            VmSuite.equal("33 34", HEX.formatHex(ten), "10-bit device");
            x = lastXfer();
            contains(x, "msg=0 addr=0x51 flags=0x0000 len=2 data=01 02\n", "EEPROM pointer");
            contains(x, "msg=3 addr=0x2a5 flags=0x0011 len=2 data=33 34\n", "10-bit read");

            // I2C_M_RECV_LEN: count then data, as an SMBus block read
            Kenv.write(DBG + "/0x48/regs", "60 03 aa bb cc");
            byte[] blk = new byte[I2cMessage.BLOCK_BUFFER_LENGTH];
            bus.transfer(I2cMessage.write(0x48, bytes(0x60)), I2cMessage.readBlock(0x48, blk));
            VmSuite.equal("03 aa bb cc", HEX.formatHex(blk, 0, 4), "count and block");
            contains(lastXfer(), "msg=1 addr=0x48 flags=0x0401 len=4 data=03 aa bb cc\n", "RECV_LEN message");
            // a flag the adapter passes on as the caller set it
            bus.transfer(I2cMessage.write(0x48, bytes(0x61)), I2cMessage.read(0x48, r1).withFlags(I2cMessage.NO_START));
            contains(lastXfer(), "msg=1 addr=0x48 flags=0x4001 len=2", "NOSTART as set");
            Kenv.write(DBG + "/0x48/regs", "reset");

            // a 7-bit message to a 10-bit address is refused before the ioctl
            try {
                bus.transfer(I2cMessage.read(0x2a5, ten));
                throw new AssertionError("0x2a5 without TEN_BIT accepted");
            } catch (IllegalArgumentException expected) {
                // fine
            }
            // too many messages for i2c-dev
            I2cMessage[] many = new I2cMessage[43];
            Arrays.fill(many, I2cMessage.read(0x48, r1));
            try {
                bus.transfer(many);
                throw new AssertionError("43 messages accepted");
            } catch (IllegalArgumentException expected) {
                // fine
            }
            bus.transfer(Arrays.copyOf(many, 42));
            contains(lastXfer(), "kind=i2c ret=42 nmsgs=42\n", "42 messages");
        }
    }

    @VmSuite.Case
    public void write_read_and_plain_read_write() {
        try (I2cDevice d = mock(0x51)) {
            byte[] mem = new byte[4];
            d.writeRead(bytes(0x01, 0x02), mem); // 16-bit pointer
            VmSuite.equal("02 03 04 05", HEX.formatHex(mem), "EEPROM write-read");
            contains(lastXfer(), "kind=i2c ret=2 nmsgs=2\n", "write-read is one transaction");
        }
        try (I2cDevice d = mock(0x48)) {
            VmSuite.equal(3, d.write(bytes(0x60, 0xaa, 0xbb)), "plain write");
            contains(lastXfer(), "msg=0 addr=0x48 flags=0x0000 len=3 data=60 aa bb\n", "plain write: one message");
            VmSuite.equal(1, d.write(bytes(0x60)), "pointer");
            byte[] rd = new byte[2];
            VmSuite.equal(2, d.read(rd), "plain read");
            VmSuite.equal("aa bb", HEX.formatHex(rd), "plain read data");
            Kenv.write(DBG + "/0x48/regs", "reset");
        }
    }

    @VmSuite.Case
    public void ten_bit_address() {
        try (I2cBus bus = I2cBus.openByName(MOCK); I2cDevice d = bus.device(0x2a5, I2cDevice.Option.TEN_BIT)) {
            VmSuite.check(d.isTenBit(), "10-bit");
            byte[] out = new byte[2];
            d.readRegister(0x33, out);
            VmSuite.equal("33 34", HEX.formatHex(out), "register read");
            String x = lastXfer();
            contains(x, "msg=0 addr=0x2a5 flags=0x0010 len=1", "I2C_M_TEN on the write");
            contains(x, "msg=1 addr=0x2a5 flags=0x0011 len=2", "I2C_M_TEN on the read");
            VmSuite.equal(0x40, d.smbusReadByteData(0x40), "SMBus at a 10-bit address");
            contains(lastXfer(), "addr=0x2a5 flags=0x0010", "SMBus write part 10-bit");
            d.writeRegister(0x50, (byte) 0x99);
            contains(lastXfer(), "msg=0 addr=0x2a5 flags=0x0010 len=2 data=50 99\n", "10-bit register write");
            Kenv.write(DBG + "/0x2a5/regs", "reset");
            // 7-bit on another descriptor of the same bus meanwhile
            try (I2cDevice seven = bus.device(0x48)) {
                VmSuite.equal(0x41, seven.smbusReadByteData(0x41), "7-bit next to 10-bit");
            }
            VmSuite.equal(0x42, d.smbusReadByteData(0x42), "10-bit still");
        }
    }

    @VmSuite.Case
    public void smbus_every_kind_on_the_wire() {
        try (I2cDevice d = mock(0x48)) {
            d.smbusQuick(true);
            contains(lastXfer(), "size=0", "quick");
            d.smbusWriteByte(0x70);
            VmSuite.equal(0x70, d.smbusReadByte(), "receive byte");
            d.smbusWriteByteData(0x71, 0x5a);
            String x = lastXfer();
            contains(x, "kind=smbus", "byte data");
            contains(x, "nmsgs=1", "byte data is one message");
            contains(x, "msg=0 addr=0x48 flags=0x0000 len=2 data=71 5a\n", "byte data on the wire");
            VmSuite.equal(0x5a, d.smbusReadByteData(0x71), "read byte data");
            x = lastXfer();
            contains(x, "rw=read command=0x71 size=2", "read byte data header");
            contains(x, "msg=1 addr=0x48 flags=0x0001 len=1 data=5a\n", "read byte data after a repeated start");
            d.smbusWriteWordData(0x72, 0x1234);
            contains(Kenv.read(DBG + "/0x48/regs"), "70: 70 5a 34 12", "word little-endian");
            VmSuite.equal(0x1234, d.smbusReadWordData(0x72), "read word");
            VmSuite.equal(0x8382, d.smbusProcessCall(0x80, 0xbeef), "process call");
            d.smbusWriteBlockData(0x90, bytes(9, 8, 7, 6));
            contains(lastXfer(), "msg=0 addr=0x48 flags=0x0000 len=6 data=90 04 09 08 07 06\n", "block write");
            contains(Kenv.read(DBG + "/0x48/regs"), "90: 04 09 08 07 06", "block write registers");
            byte[] out = new byte[32];
            VmSuite.equal(4, d.smbusReadBlockData(0x90, out), "block read count");
            VmSuite.equal("09 08 07 06", HEX.formatHex(out, 0, 4), "block read");
            Kenv.write(DBG + "/0x48/regs", "a0 00");
            fails("EPROTO", () -> d.smbusReadBlockData(0xa0, new byte[32]), "block count 0");
            Kenv.write(DBG + "/0x48/regs", "b3 03 aa bb cc");
            VmSuite.equal(3, d.smbusBlockProcessCall(0xb0, bytes(0x11, 0x22), out), "block process call count");
            VmSuite.equal("aa bb cc", HEX.formatHex(out, 0, 3), "block process call");
            d.smbusWriteI2cBlockData(0xc0, bytes(9, 8, 7, 6));
            byte[] four = new byte[4];
            VmSuite.equal(4, d.smbusReadI2cBlockData(0xc0, four), "I2C block read");
            VmSuite.equal("09 08 07 06", HEX.formatHex(four), "I2C block data");
            Kenv.write(DBG + "/0x48/regs", "reset");
        }
    }

    @VmSuite.Case
    public void pec_byte_on_the_wire_and_bad_pec() {
        try (I2cDevice d = mock(0x48, I2cDevice.Option.PEC)) {
            VmSuite.check(d.pec(), "PEC on");
            d.smbusWriteByteData(0x10, 0xab);
            String x = lastXfer();
            contains(x, "pec=1", "header");
            contains(x, String.format("msg=0 addr=0x48 flags=0x0000 len=3 data=10 ab %02x\n", pec(0x90, 0x10, 0xab)),
                    "write byte data + PEC");
            VmSuite.equal(0xab, d.smbusReadByteData(0x10), "read byte data with PEC");
            x = lastXfer();
            // [S 0x90 10 Sr 0x91 ab PEC]: the PEC covers both address bytes
            contains(x, String.format("msg=1 addr=0x48 flags=0x0001 len=2 data=ab %02x\n",
                    pec(0x90, 0x10, 0x91, 0xab)), "read + PEC");
            d.smbusWriteWordData(0x20, 0x1234);
            contains(lastXfer(), String.format("data=20 34 12 %02x\n", pec(0x90, 0x20, 0x34, 0x12)), "word + PEC");
            d.smbusWriteBlockData(0x30, bytes(1, 2));
            contains(lastXfer(), String.format("data=30 02 01 02 %02x\n", pec(0x90, 0x30, 2, 1, 2)), "block + PEC");
            byte[] out = new byte[32];
            VmSuite.equal(2, d.smbusReadBlockData(0x30, out), "block read with PEC");
            Kenv.write(DBG + "/fault", "bad-pec");
            try {
                fails("EBADMSG", () -> d.smbusReadByteData(0x10), "corrupted PEC");
            } finally {
                Kenv.write(DBG + "/fault", "none");
            }
            d.setPec(false);
            d.smbusWriteByteData(0x10, 0x10);
            contains(lastXfer(), "pec=0", "PEC off");
            contains(lastXfer(), "len=2 data=10 10\n", "no PEC byte");
            Kenv.write(DBG + "/0x48/regs", "reset");
        }
    }

    @VmSuite.Case
    public void absent_and_unplugged_device_is_enxio() {
        try (I2cDevice d = mock(0x30)) {
            HwException e = fails("ENXIO", () -> d.readRegister(0, new byte[1]), "register read at 0x30");
            VmSuite.check(e.getMessage().startsWith("I2C read register on " + d.path()
                    + ": ENXIO (No such device or address): address 0x30, register 0x00"), "message: %s",
                    e.getMessage());
            fails("ENXIO", () -> d.smbusReadByteData(0), "SMBus at 0x30");
            fails("ENXIO", () -> d.writeRegister(0, (byte) 1), "register write at 0x30");
        }
        try (I2cDevice d = mock(0x48)) {
            Kenv.write(DBG + "/0x48/present", "0");
            try {
                fails("ENXIO", () -> d.readRegister(0, new byte[1]), "unplugged: register read");
                fails("ENXIO", () -> d.smbusWriteByteData(0, 1), "unplugged: SMBus write");
            } finally {
                Kenv.write(DBG + "/0x48/present", "1");
            }
            VmSuite.equal(0x05, d.smbusReadByteData(0x05), "plugged back");
        }
    }

    @VmSuite.Case
    public void bus_faults_reach_the_caller() {
        String[][] faults = {{"nak", "ENXIO"}, {"timeout", "ETIMEDOUT"}, {"busy", "EAGAIN"}};
        try (I2cDevice d = mock(0x48)) {
            for (String[] f : faults) {
                Kenv.write(DBG + "/fault", f[0]);
                try {
                    fails(f[1], () -> d.smbusReadByteData(0), f[0] + ": SMBus read");
                    fails(f[1], () -> d.writeRegister(0, (byte) 'x'), f[0] + ": register write");
                    fails(f[1], () -> d.readRegister(0, new byte[1]), f[0] + ": register read");
                } finally {
                    Kenv.write(DBG + "/fault", "none");
                }
            }
            VmSuite.equal(0x07, d.smbusReadByteData(0x07), "after the faults");
        }
    }

    @VmSuite.Case
    public void closed_device_and_bus() {
        I2cBus bus = I2cBus.openByName(MOCK);
        I2cDevice d = bus.device(0x48);
        int fds = Kenv.openFds();
        bus.close(); // closes the device too
        VmSuite.equal(fds - 2, Kenv.openFds(), "descriptors after closing the bus");
        fails("EBADF", () -> d.smbusReadByteData(0), "a call after close");
        d.close(); // idempotent
        bus.close();
        try {
            bus.device(0x49);
            throw new AssertionError("a device of a closed bus");
        } catch (HwException e) {
            VmSuite.equal("EBADF", e.errno(), "device of a closed bus");
        }
    }
}
