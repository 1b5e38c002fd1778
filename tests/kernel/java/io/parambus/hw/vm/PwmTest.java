package io.parambus.hw.vm;

import io.parambus.hw.HwException;
import io.parambus.hw.Pwm;
import io.parambus.hw.PwmBackend;
import io.parambus.hw.PwmOptions;
import io.parambus.hw.PwmPolarity;
import io.parambus.hw.PwmState;
import io.parambus.internal.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;

/**
 * io.parambus.hw.Pwm against pbus-mock-pwm (tests/kernel/ENVIRONMENT.md section 6): four
 * channels through sysfs (this 6.1 kernel has no PWM character device), the state the
 * PWM core applied read from the mock's debugfs {@code state}. The Java counterpart of
 * suite/test-pwm.c, plus the chip removed and added again under a channel other than 0.
 */
public class PwmTest implements AutoCloseable {
    public static void main(String[] args) {
        VmSuite.main(PwmTest.class, args);
    }

    private static final String DBG = "/sys/kernel/debug/pbus-mock-pwm";
    private static final String DRIVER = "/sys/bus/platform/drivers/pbus-mock-pwm";
    private static final String DEVICE = "pbus-mock-pwm.0";
    private final List<Pwm> opened = new ArrayList<>();

    /** Closes what a case left open, clears the fault, unexports every channel. */
    @Override
    public void close() {
        opened.forEach(Pwm::close);
        Kenv.write(DBG + "/fault", "0");
        String chip = Kenv.pwmchip();
        for (int ch = 0; ch < 4; ch++) {
            if (Files.isDirectory(Path.of(chip, "pwm" + ch))) {
                Kenv.write(chip + "/unexport", Integer.toString(ch));
            }
        }
    }

    private Pwm open(int channel, PwmOptions options) {
        Pwm p = Pwm.open(chipNumber(), channel, options);
        opened.add(p);
        return p;
    }

    private static int chipNumber() {
        String chip = Kenv.pwmchip();
        return Integer.parseInt(chip.substring(chip.lastIndexOf("pwmchip") + 7));
    }

    private static boolean exported(int ch) {
        return Files.isDirectory(Path.of(Kenv.pwmchip(), "pwm" + ch));
    }

    /** The mock's line for channel ch: requested, enabled, period, duty, polarity, applies. */
    private static Map<String, String> mock(int ch) {
        for (String line : Kenv.read(DBG + "/state").split("\n")) {
            if (line.startsWith("pwm=" + ch + " ")) {
                Map<String, String> m = new HashMap<>();
                for (String kv : line.split(" ")) {
                    String[] f = kv.split("=", 2);
                    m.put(f[0], f[1]);
                }
                return m;
            }
        }
        throw new IllegalStateException("no channel " + ch + " in " + DBG + "/state");
    }

    /** Fails unless the mock holds s for channel ch, and the library reads s back. */
    private static void expectApplied(Pwm p, int ch, PwmState s) {
        Map<String, String> m = mock(ch);
        String want = "enabled=" + (s.enabled() ? 1 : 0) + " period=" + s.periodNs() + " duty=" + s.dutyCycleNs()
                + " polarity=" + (s.polarity() == PwmPolarity.INVERSED ? "inversed" : "normal");
        String got = "enabled=" + m.get("enabled") + " period=" + m.get("period") + " duty=" + m.get("duty")
                + " polarity=" + m.get("polarity");
        VmSuite.equal(want, got, "channel " + ch + " as the mock applied it");
        VmSuite.equal(s, p.state(), "channel " + ch + " read back");
    }

    private static HwException expectHw(Runnable r, String what) {
        try {
            r.run();
        } catch (HwException e) {
            System.out.println("# " + what + ": " + e.getMessage());
            return e;
        }
        throw new AssertionError(what + ": no HwException");
    }

    @VmSuite.Case
    public void chardev_absent_sysfs_chosen() {
        int n = chipNumber();
        VmSuite.check(!Files.exists(Path.of("/dev/pwmchip" + n)), "/dev/pwmchip%d exists on 6.1?", n);
        HwException e = expectHw(() -> open(0, PwmOptions.DEFAULT.withBackend(PwmBackend.CHARDEV)), "chardev only");
        VmSuite.equal(95, e.errnoValue(), "errno of an explicit chardev request");
        VmSuite.check(e.getMessage().startsWith("PWM open on /dev/pwmchip" + n + ": EOPNOTSUPP")
                && e.getMessage().contains("no PWM character device"), "message: %s", e.getMessage());
        VmSuite.check(!exported(0), "the refused open exported channel 0");
        Pwm p = open(0, PwmOptions.DEFAULT);
        VmSuite.equal(PwmBackend.SYSFS, p.backend(), "backend chosen");
        VmSuite.equal(Kenv.pwmchip() + "/pwm0", p.path(), "path");
        p.close();
        e = expectHw(() -> Pwm.open(n + 7, 0, PwmOptions.DEFAULT.withBackend(PwmBackend.CHARDEV)), "no chip");
        VmSuite.equal(2, e.errnoValue(), "errno of a chardev request of a chip that does not exist");
    }

    @VmSuite.Case
    public void every_channel_exports_and_unexports() {
        Pwm[] p = new Pwm[4];
        for (int ch = 0; ch < 4; ch++) {
            VmSuite.check(!exported(ch), "channel %d exported before", ch);
            p[ch] = open(ch, PwmOptions.DEFAULT);
            VmSuite.check(exported(ch), "channel %d not exported", ch);
            VmSuite.equal("1", mock(ch).get("requested"), "channel " + ch + " requested");
            p[ch].apply(1_000_000 + ch, 1000L * ch, ch % 2 == 0 ? PwmPolarity.NORMAL : PwmPolarity.INVERSED, true);
        }
        for (int ch = 0; ch < 4; ch++) {
            expectApplied(p[ch], ch, new PwmState(1_000_000 + ch, 1000L * ch,
                    ch % 2 == 0 ? PwmPolarity.NORMAL : PwmPolarity.INVERSED, true));
        }
        for (int ch = 0; ch < 4; ch++) {
            p[ch].setEnabled(false);
            p[ch].close();
            p[ch].close(); // idempotent
            VmSuite.check(!exported(ch), "channel %d still exported after close", ch);
            VmSuite.equal("0", mock(ch).get("requested"), "channel " + ch + " requested after close");
        }
        HwException e = expectHw(() -> open(4, PwmOptions.DEFAULT), "channel 4");
        VmSuite.equal(22, e.errnoValue(), "errno of channel 4");
        VmSuite.check(e.getMessage().contains("the chip has 4 (0 to 3)"), "message: %s", e.getMessage());
        e = expectHw(() -> Pwm.open(chipNumber() + 7, 0), "chip N+7");
        VmSuite.equal(2, e.errnoValue(), "errno of a chip that does not exist");
    }

    @VmSuite.Case
    public void every_valid_change_succeeds() {
        for (int ch : new int[] {1, 3}) {
            Pwm p = open(ch, PwmOptions.DEFAULT);
            // shrink period and duty together (duty must go first), then grow (period first)
            PwmState[] fixed = {
                new PwmState(1_000_000, 500_000, PwmPolarity.NORMAL, true),
                new PwmState(200_000, 100_000, PwmPolarity.NORMAL, true),
                new PwmState(5_000_000, 4_000_000, PwmPolarity.NORMAL, true),
                new PwmState(10, 10, PwmPolarity.INVERSED, true),
                new PwmState(10_000_000_000L, 9_999_999_999L, PwmPolarity.NORMAL, false),
                new PwmState(1, 0, PwmPolarity.INVERSED, false),
                new PwmState(1, 1, PwmPolarity.NORMAL, true),
            };
            for (PwmState s : fixed) {
                p.apply(s);
                expectApplied(p, ch, s);
            }
            SplittableRandom r = new SplittableRandom(ch);
            for (int i = 0; i < 60; i++) {
                long period = 1 + r.nextLong(r.nextBoolean() ? 100 : 50_000_000);
                long duty = r.nextInt(4) == 0 ? period : r.nextLong(period + 1);
                PwmState s = new PwmState(period, duty, r.nextBoolean() ? PwmPolarity.NORMAL : PwmPolarity.INVERSED,
                        r.nextBoolean());
                p.apply(s);
                expectApplied(p, ch, s);
            }
            // the single setters, in an order that is valid
            p.apply(8_000_000, 1_000, PwmPolarity.NORMAL, true);
            p.setPeriod(9_000_000);
            p.setDutyCycle(8_500_000);
            p.setPolarity(PwmPolarity.NORMAL);
            p.setEnabled(false);
            expectApplied(p, ch, new PwmState(9_000_000, 8_500_000, PwmPolarity.NORMAL, false));
        }
    }

    @VmSuite.Case
    public void invalid_change_refused_and_nothing_changed() {
        Pwm p = open(2, PwmOptions.DEFAULT);
        PwmState s = new PwmState(5_000_000, 4_000_000, PwmPolarity.NORMAL, true);
        p.apply(s);
        String applies = mock(2).get("applies");
        try {
            p.apply(100, 200, PwmPolarity.NORMAL, true);
            throw new AssertionError("apply with duty > period accepted");
        } catch (IllegalArgumentException e) {
            System.out.println("# apply(100, 200): " + e.getMessage());
        }
        HwException e = expectHw(() -> p.setDutyCycle(6_000_000), "duty > period");
        VmSuite.equal(22, e.errnoValue(), "errno of duty > period");
        VmSuite.check(e.getMessage().startsWith("PWM set duty cycle on " + Kenv.pwmchip() + "/pwm2/duty_cycle: "
                + "EINVAL (Invalid argument): duty cycle 6000000 ns is longer than the period 5000000 ns"),
                "message: %s", e.getMessage());
        e = expectHw(() -> p.setPeriod(3_000_000), "period < duty");
        VmSuite.check(e.getMessage().startsWith("PWM set period on " + Kenv.pwmchip() + "/pwm2/period: EINVAL "
                + "(Invalid argument): period 3000000 ns is shorter than the duty cycle 4000000 ns"), "message: %s",
                e.getMessage());
        VmSuite.equal(applies, mock(2).get("applies"), "apply calls reaching the driver");
        expectApplied(p, 2, s);
    }

    @VmSuite.Case
    public void polarity_changes_while_running() {
        Pwm p = open(2, PwmOptions.DEFAULT);
        PwmState s = new PwmState(100_000, 25_000, PwmPolarity.NORMAL, true);
        p.apply(s);
        p.apply(s.withPolarity(PwmPolarity.INVERSED)); // stopped around the change, running again after
        expectApplied(p, 2, s.withPolarity(PwmPolarity.INVERSED));
    }

    @VmSuite.Case
    public void apply_fault_is_reported_with_its_errno() {
        Pwm p = open(0, PwmOptions.DEFAULT);
        p.apply(1_000_000, 0, PwmPolarity.NORMAL, false);
        for (int errno : new int[] {5, 16, 110}) {
            Kenv.write(DBG + "/fault", Integer.toString(errno));
            HwException e = expectHw(() -> p.setDutyCycle(1000), "fault " + errno);
            Kenv.write(DBG + "/fault", "0");
            VmSuite.equal(errno, e.errnoValue(), "errno");
            VmSuite.check(e.getMessage().startsWith("PWM set duty cycle on " + Kenv.pwmchip() + "/pwm0/duty_cycle: "),
                    "message: %s", e.getMessage());
        }
        p.setDutyCycle(1000);
        expectApplied(p, 0, new PwmState(1_000_000, 1000, PwmPolarity.NORMAL, false));
    }

    @VmSuite.Case
    public void channel_2_after_the_chip_is_removed_and_added_again() {
        int before = Pwm.findChip(DEVICE);
        VmSuite.equal(chipNumber(), before, "chip found by its device");
        VmSuite.equal(before, Pwm.findChip("/sys/devices/platform/" + DEVICE), "chip found by its device path");
        VmSuite.equal(before, Pwm.findChip("/sys/bus/platform/devices/" + DEVICE), "chip found through a link");
        Pwm old = Pwm.open(DEVICE, 2, PwmOptions.DEFAULT);
        opened.add(old);
        PwmState s = new PwmState(2_000_000, 500_000, PwmPolarity.NORMAL, true);
        old.apply(s);
        expectApplied(old, 2, s);

        Kenv.unbind(DRIVER, DEVICE);
        HwException e = expectHw(() -> old.setDutyCycle(1000), "duty on a removed chip");
        VmSuite.equal(19, e.errnoValue(), "errno on a removed chip");
        VmSuite.check(e.getMessage().contains("the PWM chip was removed"), "message: %s", e.getMessage());
        VmSuite.equal(19, expectHw(old::state, "state of a removed chip").errnoValue(), "errno of state()");
        expectHw(() -> Pwm.findChip(DEVICE), "lookup while removed");
        Kenv.bind(DRIVER, DEVICE);

        // What a user does: open the channel again by the chip's device.
        int after = Pwm.findChip(DEVICE);
        VmSuite.equal(chipNumber(), after, "chip found again by its device");
        System.out.println("# chip number before " + before + ", after " + after);
        Pwm again = Pwm.open(DEVICE, 2, PwmOptions.DEFAULT);
        opened.add(again);
        VmSuite.equal("1", mock(2).get("requested"), "channel 2 of the new chip requested");
        PwmState t = new PwmState(3_000_000, 1_500_000, PwmPolarity.INVERSED, true);
        again.apply(t);
        expectApplied(again, 2, t);
        // Closing the old object must not touch the new chip (whose number may be the same).
        old.close();
        VmSuite.check(exported(2), "closing the old channel unexported the new chip's channel 2");
        again.setDutyCycle(1_000_000);
        expectApplied(again, 2, t.withDutyCycle(1_000_000));
        again.close();
        VmSuite.check(!exported(2), "channel 2 still exported after close");
    }

    @VmSuite.Case
    public void someone_elses_export_is_left_alone() {
        String chip = Kenv.pwmchip();
        Kenv.write(chip + "/export", "3");
        Pwm p = open(3, PwmOptions.DEFAULT);
        p.apply(1000, 500, PwmPolarity.NORMAL, true);
        p.close();
        VmSuite.check(exported(3), "a channel exported by someone else was unexported");
        Kenv.write(chip + "/unexport", "3");
        Pwm k = open(1, PwmOptions.DEFAULT.withKeepExported(true));
        k.close();
        VmSuite.check(exported(1), "keepExported: channel 1 unexported on close");
    }

    private static final MethodHandle SETFSUID = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("setfsuid").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    private static void setfsuid(int uid) {
        try {
            int r = (int) SETFSUID.invokeExact(uid);
            assert r >= 0;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Opens channel 1 in a thread whose file accesses are checked as uid 65534 (setfsuid is per thread). */
    private Thread openAsNobody(Duration timeout, AtomicReference<Object> result) {
        Thread t = Thread.ofPlatform().start(() -> {
            setfsuid(65534);
            try {
                Pwm p = Pwm.open(chipNumber(), 1, PwmOptions.DEFAULT.withBackend(PwmBackend.SYSFS)
                        .withExportTimeout(timeout));
                try {
                    p.apply(123_456, 0, PwmPolarity.NORMAL, false);
                    result.set(p.state());
                } finally {
                    p.close();
                }
            } catch (RuntimeException e) {
                result.set(e);
            } finally {
                setfsuid(0);
            }
        });
        return t;
    }

    @VmSuite.Case
    public void udev_export_race() throws Exception {
        // udev's part played by hand: the channel is exported as root, its files belong to
        // root (0600) at first and are handed to the user 150 ms later.
        String chip = Kenv.pwmchip();
        String[] attrs = {"period", "duty_cycle", "polarity", "enable"};
        Kenv.write(chip + "/export", "1");
        for (String a : attrs) {
            Path f = Path.of(chip, "pwm1", a);
            Files.setAttribute(f, "unix:mode", 0600);
            Files.setAttribute(f, "unix:uid", 0);
        }
        AtomicReference<Object> result = new AtomicReference<>();
        Thread t = openAsNobody(Duration.ofSeconds(5), result);
        Thread.sleep(150);
        for (String a : attrs) {
            Files.setAttribute(Path.of(chip, "pwm1", a), "unix:uid", 65534);
        }
        t.join();
        VmSuite.check(result.get() instanceof PwmState, "open as uid 65534 while udev works: %s", result.get());
        VmSuite.equal("123456", mock(1).get("period"), "period applied as uid 65534");

        // Files that never become usable: a clean ETIMEDOUT naming the file.
        for (String a : attrs) {
            Files.setAttribute(Path.of(chip, "pwm1", a), "unix:uid", 0);
        }
        result.set(null);
        long t0 = System.nanoTime();
        t = openAsNobody(Duration.ofMillis(300), result);
        t.join();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        VmSuite.check(result.get() instanceof HwException, "open as uid 65534, files never usable: %s", result.get());
        HwException e = (HwException) result.get();
        System.out.println("# " + e.getMessage() + " (" + ms + " ms)");
        VmSuite.equal(110, e.errnoValue(), "errno");
        VmSuite.check(e.getMessage().startsWith("PWM export on " + chip + "/pwm1/period: ETIMEDOUT")
                && e.getMessage().contains("still EACCES"), "message: %s", e.getMessage());
        VmSuite.check(ms >= 300, "gave up after %d ms, before its 300 ms", ms);
        VmSuite.check(exported(1), "a channel exported by someone else was unexported by the failed open");
    }

    @VmSuite.Case
    public void no_leftover_and_no_allocation_per_duty_change() throws Exception {
        int fds = Kenv.openFds();
        for (int i = 0; i < 50; i++) {
            try (Pwm p = Pwm.open(DEVICE, i % 4, PwmOptions.DEFAULT)) {
                // (a fresh export shows what the channel's previous user left: apply sets it all)
                p.apply(1000 + i, i, PwmPolarity.NORMAL, i % 2 == 0);
            }
        }
        VmSuite.equal(fds, Kenv.openFds(), "open descriptors after 50 open/close");
        for (int ch = 0; ch < 4; ch++) {
            VmSuite.check(!exported(ch), "channel %d left exported", ch);
        }
        // The guest's JVM runs C1 only (-XX:TieredStopAtLevel=1), whose FFM downcalls
        // allocate a few bytes each (the JDK's, measured here as the baseline: the same
        // number of bare pwrite() downcalls); the library must add nothing to that. The
        // host's tests (C2) see 0 bytes per downcall.
        var bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Pwm p = open(1, PwmOptions.DEFAULT);
        p.apply(1_000_000, 0, PwmPolarity.NORMAL, true);
        long[] bytes = new long[3];
        long[] baseline = new long[3];
        try (Arena a = Arena.ofConfined()) {
            int devNull = Native.open("/dev/null", Native.O_WRONLY);
            MemorySegment buf = a.allocate(16);
            MemorySegment capture = a.allocate(Native.captureLayout());
            try {
                for (int round = 0; round < 3; round++) {
                    for (int i = 0; i < 2000; i++) {
                        p.setDutyCycle(i);
                        Native.pwrite(devNull, buf, 6, 0, capture);
                    }
                    long before = bean.getCurrentThreadAllocatedBytes();
                    for (int i = 0; i < 5000; i++) {
                        Native.pwrite(devNull, buf, 6, 0, capture);
                    }
                    long middle = bean.getCurrentThreadAllocatedBytes();
                    for (int i = 0; i < 5000; i++) {
                        p.setDutyCycle(i * 7L);
                    }
                    bytes[round] = bean.getCurrentThreadAllocatedBytes() - middle;
                    baseline[round] = middle - before;
                    if (bytes[round] <= baseline[round] + 512) {
                        System.out.println("# 5000 duty changes allocated " + bytes[round] + " bytes, 5000 bare "
                                + "downcalls " + baseline[round]);
                        return;
                    }
                }
            } finally {
                Native.close(devNull);
            }
        }
        throw new AssertionError("5000 duty changes allocated " + java.util.Arrays.toString(bytes)
                + " bytes, 5000 bare downcalls " + java.util.Arrays.toString(baseline));
    }
}
