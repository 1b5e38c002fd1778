package io.parambus.hw.vm;

import io.parambus.hw.HwException;
import io.parambus.hw.SpiDevice;
import io.parambus.hw.SpiMode;
import io.parambus.hw.SpiPreparedMessage;
import io.parambus.hw.SpiTransfer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * io.parambus.hw's SPI against pbus-mock-spi (tests/kernel/ENVIRONMENT.md section 5): a
 * loopback controller (rx receives the tx bytes, 0xff without tx) on bus 0 with two
 * spidev devices, that logs every message, transfer and chip-select change to debugfs
 * ({@code last_message}). Settings, the grouping of transfers into one message and the
 * chip select held between them are checked in that record, not inferred.
 *
 * <p>Mode, word size and speed belong to the device, not the descriptor: every case
 * starts from mode 0, 8 bits, 10 MHz ({@link #open0()}); the harness rebinds the devices
 * before this program.
 */
public class SpiTest {
    public static void main(String[] args) {
        VmSuite.main(SpiTest.class, args);
    }

    private static final String DBG = "/sys/kernel/debug/pbus-mock-spi";
    private static final String SPIDEV = "/sys/bus/spi/drivers/spidev";
    private static final HexFormat HEX = HexFormat.of();

    static SpiDevice open0() {
        SpiDevice spi = SpiDevice.open("/dev/spidev0.0");
        try {
            spi.setMode(SpiMode.MODE_0);
            spi.setBitsPerWord(8);
            spi.setMaxSpeedHz(10_000_000);
        } catch (RuntimeException e) {
            spi.close();
            throw e;
        }
        return spi;
    }

    static void clearLog() {
        Kenv.write(DBG + "/log", "x");
    }

    static String lastMessage() {
        return Kenv.read(DBG + "/last_message") + "\n";
    }

    static int count(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }

    static void contains(String text, String part, String what) {
        VmSuite.check(text.contains(part), "%s: no '%s' in:\n%s", what, part, text);
    }

    static HwException fails(String errno, Runnable r, String what) {
        return I2cTest.fails(errno, r, what);
    }

    static byte[] bytes(int... v) {
        return I2cTest.bytes(v);
    }

    @VmSuite.Case
    public void open_any_bus_and_chip_select_and_defaults() {
        try (SpiDevice spi = SpiDevice.open(0, 0)) {
            VmSuite.equal("/dev/spidev0.0", spi.path(), "path");
            VmSuite.equal(4096, spi.bufferSize(), "spidev bufsiz");
            VmSuite.equal(10_000_000, spi.maxSpeedHz(), "max speed at start");
        }
        fails("ENOENT", () -> SpiDevice.open(1, 0), "no spidev1.0");
        HwException e = fails("ENOTTY", () -> SpiDevice.open("/dev/null"), "not a spidev node");
        VmSuite.equal("SPI open", e.operation(), "operation");
    }

    @VmSuite.Case
    public void mode32_bits_per_word_speed_read_back() {
        try (SpiDevice spi = open0()) {
            // bits above the first byte need the 32-bit mode ioctl
            int mode = SpiMode.MODE_3 | SpiMode.LSB_FIRST | SpiMode.TX_QUAD | SpiMode.RX_QUAD;
            spi.setMode(mode);
            VmSuite.equal(mode, spi.mode(), "mode read back");
            HwException e = fails("EINVAL", () -> spi.setMode(SpiMode.MODE_0 | SpiMode.READY), "SPI_READY");
            VmSuite.check(e.getMessage().startsWith("SPI set mode on /dev/spidev0.0: EINVAL (Invalid argument): "
                    + "0x00000080 READY"), "message: %s", e.getMessage());
            fails("EINVAL", () -> spi.setMode(SpiMode.TX_DUAL | SpiMode.TX_QUAD), "contradictory wire widths");
            VmSuite.equal(mode, spi.mode(), "mode unchanged after the refusals");
            spi.setMode(SpiMode.MODE_1 | SpiMode.CS_HIGH | SpiMode.TX_OCTAL | SpiMode.RX_OCTAL);
            VmSuite.equal(SpiMode.MODE_1 | SpiMode.CS_HIGH | SpiMode.TX_OCTAL | SpiMode.RX_OCTAL, spi.mode(),
                    "octal and CS_HIGH");
            spi.setMode(mode);
            spi.setBitsPerWord(16);
            VmSuite.equal(16, spi.bitsPerWord(), "bits per word");
            fails("EINVAL", () -> spi.setBitsPerWord(3), "3 bits per word");
            VmSuite.equal(16, spi.bitsPerWord(), "bits per word unchanged");
            spi.setMaxSpeedHz(2_000_000);
            VmSuite.equal(2_000_000, spi.maxSpeedHz(), "speed");
            clearLog();
            byte[] tx = bytes(1, 2, 3, 4), rx = new byte[4];
            VmSuite.equal(4, spi.transfer(tx, rx), "bytes transferred");
            String log = lastMessage();
            contains(log, "mode=0x00000a0b", "mode on the wire");
            contains(log, "speed=2000000 bpw=16", "speed and word size on the wire");
        }
    }

    @VmSuite.Case
    public void loopback_transfer_write_read() {
        try (SpiDevice spi = open0()) {
            byte[] tx = new byte[64], rx = new byte[64];
            for (int i = 0; i < 64; i++) {
                tx[i] = (byte) (i * 7 + 1);
            }
            VmSuite.equal(64, spi.transfer(tx, rx), "full duplex");
            VmSuite.equal(HEX.formatHex(tx), HEX.formatHex(rx), "loopback");
            byte[] inPlace = tx.clone();
            spi.transfer(inPlace, inPlace);
            VmSuite.equal(HEX.formatHex(tx), HEX.formatHex(inPlace), "in place");
            VmSuite.equal(8, spi.write(Arrays.copyOf(tx, 8)), "write");
            byte[] r = new byte[8];
            VmSuite.equal(8, spi.read(r), "read");
            VmSuite.equal("ffffffffffffffff", HEX.formatHex(r), "read without tx: 0xff");
            try (Arena a = Arena.ofConfined()) {
                MemorySegment t = a.allocate(16), x = a.allocate(16);
                for (int i = 0; i < 16; i++) {
                    t.set(ValueLayout.JAVA_BYTE, i, (byte) (0xa0 + i));
                }
                VmSuite.equal(16, spi.transfer(t, x), "native segments");
                VmSuite.equal(-1L, t.mismatch(x), "native segments loopback");
            }
        }
    }

    @VmSuite.Case
    public void write_then_read_is_one_message_cs_held() {
        // Pi4J: SPI write-then-read missing. Two transfers, one message, CS asserted once.
        try (SpiDevice spi = open0()) {
            clearLog();
            byte[] answer = new byte[5];
            VmSuite.equal(8, spi.writeThenRead(bytes(0x0a, 0x0b, 0x0c), answer), "bytes transferred");
            VmSuite.equal("ffffffffff", HEX.formatHex(answer), "the read phase (nothing to echo)");
            String log = lastMessage();
            contains(log, "ntransfers=2", "one message of two transfers");
            VmSuite.equal(1, count(log, "msg seq="), "messages");
            VmSuite.equal(2, count(log, "xfer "), "transfers");
            contains(log, "idx=0 cs=0 mode=0x00000000 max_speed=10000000 speed=10000000 bpw=8 len=3", "the write");
            contains(log, "tx=0a0b0c", "the command on the wire");
            contains(log, "idx=1 cs=0 mode=0x00000000 max_speed=10000000 speed=10000000 bpw=8 len=5", "the read");
            VmSuite.equal(1, count(log, "cs cs=0 level=0"), "selected once");
            VmSuite.equal(1, count(log, "cs cs=0 level=1"), "released once");
            VmSuite.check(log.indexOf("level=1") > log.indexOf("idx=1"), "CS released only after the read:\n%s", log);
        }
    }

    @VmSuite.Case
    public void multi_transfer_message_per_transfer_settings() {
        // Pi4J: multi-buffer transfers broken. Three transfers, one message, settings of their own.
        try (SpiDevice spi = open0()) {
            clearLog();
            byte[] a = bytes(0x11, 0x22, 0x33), ra = new byte[3], b = bytes(0x44, 0x55, 0x66, 0x77), rb = new byte[4];
            byte[] c = bytes(0x88, 0x99), rc = new byte[2];
            int n = spi.transfer(SpiTransfer.duplex(a, ra).speedHz(500_000).delayUsecs(10).csChange(true),
                    SpiTransfer.duplex(b, rb).speedHz(1_000_000).bitsPerWord(16).wordDelayUsecs(2),
                    SpiTransfer.duplex(c, rc).delayUsecs(5));
            VmSuite.equal(9, n, "bytes transferred");
            VmSuite.check(Arrays.equals(a, ra) && Arrays.equals(b, rb) && Arrays.equals(c, rc), "loopback of all three");
            String log = lastMessage();
            contains(log, "ntransfers=3", "one message");
            VmSuite.equal(3, count(log, "xfer "), "transfers");
            contains(log, "idx=0 cs=0 mode=0x00000000 max_speed=10000000 speed=500000 bpw=8 len=3 tx_nbits=1 "
                    + "rx_nbits=1 cs_change=1 delay=10us", "transfer 0");
            contains(log, "idx=1 cs=0 mode=0x00000000 max_speed=10000000 speed=1000000 bpw=16 len=4", "transfer 1");
            contains(log, "cs_change=0 delay=0us word_delay=2us", "transfer 1's word delay");
            contains(log, "tx=44556677", "transfer 1's bytes");
            contains(log, "idx=2 cs=0 mode=0x00000000 max_speed=10000000 speed=10000000 bpw=8 len=2", "transfer 2");
            contains(log, "cs_change=0 delay=5us", "transfer 2's delay");
            // cs_change after transfer 0: released and selected again mid-message, held otherwise
            VmSuite.equal(2, count(log, "cs cs=0 level=0"), "selections");
            VmSuite.equal(2, count(log, "cs cs=0 level=1"), "releases");

            // the same from native segments and a length-only transfer (zeros out, nothing kept)
            clearLog();
            try (Arena ar = Arena.ofConfined()) {
                MemorySegment t = ar.allocate(2), r = ar.allocate(3);
                t.set(ValueLayout.JAVA_BYTE, 0, (byte) 0x5a);
                t.set(ValueLayout.JAVA_BYTE, 1, (byte) 0xa5);
                VmSuite.equal(9, spi.transfer(SpiTransfer.write(t), SpiTransfer.write(4), SpiTransfer.read(r)),
                        "segments");
                VmSuite.equal(0xff, r.get(ValueLayout.JAVA_BYTE, 0) & 0xff, "read phase");
            }
            log = lastMessage();
            contains(log, "ntransfers=3", "segments: one message");
            contains(log, "tx=5aa5", "segment bytes");
            VmSuite.equal(3, count(log, "xfer "), "segments: three transfers clocked");
            contains(log, "idx=1 cs=0 mode=0x00000000 max_speed=10000000 speed=10000000 bpw=8 len=4 tx_nbits=1 "
                    + "rx_nbits=0", "a length-only write");
            contains(log, "tx=00000000", "zeros");
        }
    }

    @VmSuite.Case
    public void wire_widths_per_transfer() {
        try (SpiDevice spi = open0()) {
            spi.setMode(SpiMode.TX_QUAD | SpiMode.RX_DUAL);
            clearLog();
            spi.transfer(SpiTransfer.write(bytes(1, 2, 3, 4)).txNbits(4), SpiTransfer.read(new byte[4]).rxNbits(2));
            String log = lastMessage();
            contains(log, "tx_nbits=4", "quad transmit");
            contains(log, "rx_nbits=2", "dual receive");
        }
    }

    @VmSuite.Case
    public void prepared_message_runs_many_times_allocating_nothing() throws Exception {
        try (SpiDevice spi = open0();
                SpiPreparedMessage m = spi.prepare(SpiTransfer.write(bytes(0x03, 0x00)).speedHz(4_000_000),
                        SpiTransfer.duplex(24).delayUsecs(1))) {
            VmSuite.equal(2, m.size(), "transfers");
            VmSuite.equal(24, m.length(1), "length");
            MemorySegment tx = m.tx(1), rx = m.rx(1);
            byte[] copy = new byte[24];
            for (int run = 0; run < 500; run++) {
                for (int i = 0; i < 24; i++) {
                    tx.set(ValueLayout.JAVA_BYTE, i, (byte) (run + i));
                }
                VmSuite.equal(26, m.run(), "bytes of a run");
                m.getRx(1, copy);
                for (int i = 0; i < 24; i++) {
                    if (copy[i] != (byte) (run + i) || rx.get(ValueLayout.JAVA_BYTE, i) != copy[i]) {
                        throw new AssertionError("run " + run + " byte " + i + ": " + copy[i]);
                    }
                }
            }
            m.setTx(1, bytes(0xaa, 0xbb));
            clearLog();
            m.run();
            String log = lastMessage();
            contains(log, "ntransfers=2", "one message");
            contains(log, "idx=0 cs=0 mode=0x00000000 max_speed=10000000 speed=4000000 bpw=8 len=2", "transfer 0");
            contains(log, "tx=0300", "the initial command");
            contains(log, "delay=1us", "transfer 1's delay");
            contains(log, "tx=aabb", "setTx");
            try {
                m.rx(0);
                throw new AssertionError("rx of a transmit-only transfer");
            } catch (IllegalArgumentException expected) {
                // fine
            }
            // confined: another thread can neither run it nor touch its buffers
            CompletableFuture<Throwable> other = CompletableFuture.supplyAsync(() -> {
                try {
                    m.run();
                    return null;
                } catch (Throwable t) {
                    return t;
                }
            }, r -> new Thread(r).start());
            Throwable t = other.get();
            VmSuite.check(t instanceof WrongThreadException, "a run from another thread: %s", t);
        }
        // 0 bytes per run, measured with the users' JIT (see BusAllocationProbe)
        Map<String, String> r = BusAllocationProbe.inChild(80, "spi", "/dev/spidev0.0", "8", "200000");
        System.out.printf("# %s prepared 24-byte runs at %s ns each%n", r.get("calls"), r.get("ns_per_call"));
        BusAllocationProbe.assertFlat(r, "prepared SPI run");
    }

    @VmSuite.Case
    public void prepared_message_closed() {
        SpiDevice spi = open0();
        try {
            SpiPreparedMessage m = spi.prepare(SpiTransfer.duplex(4));
            MemorySegment tx = m.tx(0);
            m.close();
            m.close();
            try {
                tx.get(ValueLayout.JAVA_BYTE, 0);
                throw new AssertionError("a buffer of a closed prepared message is readable");
            } catch (IllegalStateException expected) {
                // the arena is closed: no dangling memory
            }
            try {
                m.run();
                throw new AssertionError("a closed prepared message ran");
            } catch (IllegalStateException expected) {
                // fine
            }
            SpiPreparedMessage later = spi.prepare(SpiTransfer.duplex(4));
            spi.close();
            fails("EBADF", later::run, "a prepared message of a closed device");
            later.close();
        } finally {
            spi.close();
        }
    }

    @VmSuite.Case
    public void over_bufsiz_is_emsgsize() {
        try (SpiDevice spi = open0(); Arena a = Arena.ofConfined()) {
            byte[] big = new byte[4097];
            VmSuite.equal(4096, spi.transfer(Arrays.copyOf(big, 4096), new byte[4096]), "exactly bufsiz");
            HwException e = fails("EMSGSIZE", () -> spi.transfer(big, new byte[4097]), "4097 bytes from arrays");
            VmSuite.check(e.getMessage().startsWith("SPI transfer on /dev/spidev0.0: EMSGSIZE (Message too long): "),
                    "message: %s", e.getMessage());
            fails("EMSGSIZE", () -> spi.transfer(SpiTransfer.write(new byte[3000]), SpiTransfer.write(new byte[1200])),
                    "3000 + 1200 bytes in one message");
            // native segments go to the kernel as they are: spidev itself says EMSGSIZE
            MemorySegment s = a.allocate(4097);
            fails("EMSGSIZE", () -> spi.transfer(s, a.allocate(4097)), "4097 bytes from native segments");
            fails("EMSGSIZE", () -> spi.prepare(SpiTransfer.write(5000)), "a prepared message over bufsiz");
            VmSuite.equal(2, spi.transfer(bytes(1, 2), new byte[2]), "still working");
        }
    }

    @VmSuite.Case
    public void both_chip_selects() {
        for (int cs = 0; cs < 2; cs++) {
            try (SpiDevice spi = SpiDevice.open(0, cs)) {
                clearLog();
                byte[] rx = new byte[2];
                VmSuite.equal(2, spi.transfer(bytes(0xde, 0xad), rx), "transfer on cs " + cs);
                VmSuite.equal("dead", HEX.formatHex(rx), "loopback on cs " + cs);
                String log = lastMessage();
                contains(log, "msg seq=", "message on cs " + cs);
                contains(log, "xfer seq=", "transfer on cs " + cs);
                contains(log, " cs=" + cs + " ", "the chip select in the record");
                contains(log, "cs cs=" + cs + " level=0", "chip select " + cs + " asserted");
                VmSuite.equal(0, count(log, "cs cs=" + (1 - cs) + " "), "the other chip select untouched");
            }
        }
    }

    @VmSuite.Case
    public void controller_faults_reach_the_caller() {
        try (SpiDevice spi = open0()) {
            String[][] faults = {{"5", "EIO"}, {"110", "ETIMEDOUT"}};
            for (String[] f : faults) {
                Kenv.write(DBG + "/fault", f[0]);
                try {
                    HwException e = fails(f[1], () -> spi.transfer(bytes(1, 2), new byte[2]), "fault " + f[0]);
                    VmSuite.check(e.getMessage().contains("1 transfer, 2 bytes out, 2 bytes in"), "message: %s",
                            e.getMessage());
                } finally {
                    Kenv.write(DBG + "/fault", "0");
                }
            }
            VmSuite.equal(2, spi.transfer(bytes(1, 2), new byte[2]), "after the faults");
        }
    }

    @VmSuite.Case
    public void unbound_spidev_is_eshutdown() throws InterruptedException {
        SpiDevice spi = open0();
        SpiPreparedMessage m = spi.prepare(SpiTransfer.duplex(4));
        try {
            VmSuite.equal(4, m.run(), "before");
            Kenv.unbind(SPIDEV, "spi0.0");
            try {
                fails("ESHUTDOWN", () -> spi.transfer(bytes(1, 2, 3, 4), new byte[4]), "transfer");
                fails("ESHUTDOWN", m::run, "prepared run");
                fails("ESHUTDOWN", spi::mode, "read mode");
                fails("ESHUTDOWN", () -> spi.setMaxSpeedHz(1_000_000), "set speed");
            } finally {
                m.close();
                spi.close();
                Kenv.bind(SPIDEV, "spi0.0");
            }
        } finally {
            m.close();
            spi.close();
        }
        // back in service (the node comes back when udev-less devtmpfs recreates it)
        SpiDevice again = null;
        for (int i = 0; i < 100 && again == null; i++) {
            try {
                again = open0();
            } catch (HwException e) {
                Thread.sleep(10);
            }
        }
        VmSuite.check(again != null, "spidev0.0 did not come back");
        try (SpiDevice s = again) {
            VmSuite.equal(4, s.transfer(bytes(1, 2, 3, 4), new byte[4]), "after rebinding");
        }
    }
}
