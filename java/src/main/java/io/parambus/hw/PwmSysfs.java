package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import io.parambus.internal.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A PWM channel through sysfs ({@code /sys/class/pwm/pwmchipN/pwmK/}).
 *
 * <p>Opening exports the channel unless it is exported already (then it is not
 * this object's, and stays exported on close), then waits for its attribute files:
 * the kernel creates {@code pwmK/} during the export, but udev may change the
 * files' owner and mode a moment later, so an unprivileged user sees
 * {@code ENOENT} or {@code EACCES} at first. The four files are opened read-write
 * with retries (1, 2, 4 ... 32 ms apart) until the export timeout. An {@code EBUSY}
 * from {@code export} means either that someone exported the channel in between
 * (its directory exists: taken as exported) or that a kernel driver holds it.
 *
 * <p>The attribute files stay open, so that a change is one {@code pwrite()} of a
 * number formatted into this object's buffer: nothing is allocated per call. The
 * {@code unexport} file of the chip is opened at export time too and kept: after
 * the chip is removed, every file of the old chip fails with {@code ENODEV}, and a
 * late close cannot unexport a channel of a new chip that took the same number.
 *
 * <p>Threads: every call holds one lock (the buffer and errno are shared).
 */
final class PwmSysfs implements Pwm.Impl {
    static final String CLASS_DIR = "/sys/class/pwm";
    private static final int PERIOD = 0, DUTY = 1, POLARITY = 2, ENABLE = 3;
    private static final String[] ATTRIBUTES = {"period", "duty_cycle", "polarity", "enable"};
    private static final long TEXT_SIZE = 32;

    private final int channel;
    private final String chipDir;
    private final String[] paths = new String[4];
    private final int[] fds = {-1, -1, -1, -1};
    private final Arena arena = Arena.ofShared();
    private final MemorySegment capture = arena.allocate(Native.captureLayout());
    private final MemorySegment text = arena.allocate(TEXT_SIZE);
    private final ReentrantLock lock = new ReentrantLock();
    private int unexportFd = -1;
    private boolean exportedByUs;
    private boolean closed;

    private PwmSysfs(int chip, int channel) {
        this.channel = channel;
        this.chipDir = CLASS_DIR + "/pwmchip" + chip;
        for (int i = 0; i < 4; i++) {
            paths[i] = chipDir + "/pwm" + channel + "/" + ATTRIBUTES[i];
        }
    }

    /** Exports (if needed) and opens channel of chip; throws HwException naming the file that failed. */
    static PwmSysfs open(int chip, int channel, PwmOptions options) {
        PwmSysfs p = new PwmSysfs(chip, channel);
        try {
            p.setUp(options);
            return p;
        } catch (RuntimeException | Error e) {
            p.abandon();
            throw e;
        }
    }

    private void setUp(PwmOptions options) {
        if (!Files.isDirectory(Path.of(chipDir))) {
            throw new HwException("PWM open", chipDir, Native.ENOENT, "no such PWM chip");
        }
        long npwm = readNumberFile(chipDir + "/npwm");
        if (channel >= npwm) {
            throw new HwException("PWM open", chipDir, Native.EINVAL,
                    "channel " + channel + " does not exist: the chip has " + npwm + " (0 to " + (npwm - 1) + ")");
        }
        Path dir = Path.of(chipDir, "pwm" + channel);
        if (!Files.isDirectory(dir)) {
            if (!options.keepExported()) {
                unexportFd = openFile(chipDir + "/unexport", Native.O_WRONLY);
                if (unexportFd < 0) {
                    int e = -unexportFd;
                    unexportFd = -1;
                    throw new HwException("PWM export", chipDir + "/unexport", e,
                            "needed to unexport the channel on close (or open with keepExported)");
                }
            }
            int r = writeFile(chipDir + "/export", Integer.toString(channel));
            if (r == 0) {
                exportedByUs = true;
            } else if (r != -Native.EBUSY || !Files.isDirectory(dir)) {
                throw new HwException("PWM export", chipDir + "/export", -r,
                        r == -Native.EBUSY ? "channel " + channel + " is in use by a kernel driver" : null);
            }
            // EBUSY with pwmK/ there: someone else exported it just now; not ours to unexport.
        }
        if (!exportedByUs && unexportFd >= 0) {
            Native.close(unexportFd);
            unexportFd = -1;
        }
        waitForAttributes(options.exportTimeout().toNanos());
    }

    /** Opens the four attribute files read-write, retrying while udev has not made them usable yet. */
    private void waitForAttributes(long timeoutNs) {
        long start = System.nanoTime();
        long pauseMs = 1;
        for (;;) {
            int failed = -1;
            int err = 0;
            for (int i = 0; i < 4 && failed < 0; i++) {
                int fd = openFile(paths[i], Native.O_RDWR);
                if (fd < 0) {
                    failed = i;
                    err = -fd;
                } else {
                    fds[i] = fd;
                }
            }
            if (failed < 0) {
                return;
            }
            closeAttributes();
            boolean udev = err == Native.ENOENT || err == Native.EACCES || err == Native.EPERM;
            long waited = System.nanoTime() - start;
            if (!udev) {
                throw new HwException("PWM open", paths[failed], err);
            }
            if (waited >= timeoutNs) {
                throw new HwException("PWM export", paths[failed], Native.ETIMEDOUT, "still " + Native.name(err)
                        + " after " + TimeUnit.NANOSECONDS.toMillis(waited)
                        + " ms: the exported channel's files did not appear or become writable (udev rules?)");
            }
            try {
                Thread.sleep(Math.min(pauseMs, TimeUnit.NANOSECONDS.toMillis(timeoutNs - waited) + 1));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HwException("PWM export", paths[failed], Native.EINTR, "interrupted while waiting for udev");
            }
            pauseMs = Math.min(pauseMs * 2, 32);
        }
    }

    private void closeAttributes() {
        for (int i = 0; i < 4; i++) {
            if (fds[i] >= 0) {
                Native.close(fds[i]);
                fds[i] = -1;
            }
        }
    }

    /** Undoes a failed open: files closed, the export undone if it was ours, memory freed. */
    private void abandon() {
        closeAttributes();
        if (unexportFd >= 0) {
            if (exportedByUs) {
                writeText(unexportFd, Integer.toString(channel));
            }
            Native.close(unexportFd);
            unexportFd = -1;
        }
        arena.close();
    }

    // ---- open-time file helpers (they allocate; the per-call paths below do not) ----

    private static int openFile(String path, int flags) {
        try {
            return Native.open(path, flags | Native.O_CLOEXEC);
        } catch (Native.Errno e) {
            return -e.code;
        }
    }

    private long writeText(int fd, String s) {
        int n = s.length();
        for (int i = 0; i < n; i++) {
            text.set(JAVA_BYTE, i, (byte) s.charAt(i));
        }
        return Native.pwrite(fd, text, n, 0, capture);
    }

    /** Writes s to the file at path: 0 or -errno. */
    private int writeFile(String path, String s) {
        int fd = openFile(path, Native.O_WRONLY);
        if (fd < 0) {
            return fd;
        }
        long r = writeText(fd, s);
        Native.close(fd);
        return r < 0 ? (int) r : 0;
    }

    private long readNumberFile(String path) {
        int fd = openFile(path, Native.O_RDONLY);
        if (fd < 0) {
            throw new HwException("PWM open", path, -fd);
        }
        try {
            return readNumber(fd, "PWM open", path);
        } finally {
            Native.close(fd);
        }
    }

    // ---- per-call paths: no allocation unless they fail ----

    private long readNumber(int fd, String operation, String path) {
        long n = Native.pread(fd, text, TEXT_SIZE - 1, 0, capture);
        if (n < 0) {
            throw error(operation, path, (int) -n, null);
        }
        long v = 0;
        int i = 0;
        for (; i < n; i++) {
            byte b = text.get(JAVA_BYTE, i);
            if (b < '0' || b > '9') {
                break;
            }
            v = v * 10 + (b - '0');
        }
        if (i == 0) {
            throw new HwException(operation, path, 5, "not a number");
        }
        return v;
    }

    /** Formats v (not negative) into the buffer and writes it to attribute a: bytes written or -errno. */
    private long writeNumber(int a, long v) {
        int len = 1;
        for (long x = v / 10; x != 0; x /= 10) {
            len++;
        }
        long x = v;
        for (int i = len - 1; i >= 0; i--) {
            text.set(JAVA_BYTE, i, (byte) ('0' + x % 10));
            x /= 10;
        }
        return Native.pwrite(fds[a], text, len, 0, capture);
    }

    private HwException error(String operation, String path, int errno, String detail) {
        if (errno == 19 && detail == null) {
            detail = "the PWM chip was removed; open the channel again (Pwm.open by device finds its new number)";
        }
        return new HwException(operation, path, errno, detail);
    }

    private void ensureOpen(String operation, int a) {
        if (closed) {
            throw new HwException(operation, paths[a], 9, "closed");
        }
    }

    private PwmState readState() {
        long period = readNumber(fds[PERIOD], "PWM get state", paths[PERIOD]);
        long duty = readNumber(fds[DUTY], "PWM get state", paths[DUTY]);
        long n = Native.pread(fds[POLARITY], text, TEXT_SIZE - 1, 0, capture);
        if (n < 0) {
            throw error("PWM get state", paths[POLARITY], (int) -n, null);
        }
        byte first = n > 0 ? text.get(JAVA_BYTE, 0) : 0;
        if (first != 'n' && first != 'i') {
            throw new HwException("PWM get state", paths[POLARITY], 5, "neither normal nor inversed");
        }
        long enabled = readNumber(fds[ENABLE], "PWM get state", paths[ENABLE]);
        return new PwmState(period, Math.min(duty, period), first == 'i' ? PwmPolarity.INVERSED : PwmPolarity.NORMAL,
                enabled != 0);
    }

    @Override
    public PwmState state() {
        lock.lock();
        try {
            ensureOpen("PWM get state", PERIOD);
            return readState();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void apply(PwmState target) {
        lock.lock();
        try {
            ensureOpen("PWM apply", PERIOD);
            for (PwmWriteOrder.Step step : PwmWriteOrder.plan(readState(), target)) {
                switch (step) {
                    case DISABLE -> writeEnable(false, "PWM apply");
                    case DUTY_CYCLE -> writeDuty(target.dutyCycleNs(), "PWM apply");
                    case PERIOD -> writePeriod(target.periodNs(), "PWM apply");
                    case POLARITY -> writePolarity(target.polarity(), "PWM apply");
                    case ENABLE -> writeEnable(true, "PWM apply");
                }
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void setPeriod(long ns) {
        lock.lock();
        try {
            ensureOpen("PWM set period", PERIOD);
            writePeriod(ns, "PWM set period");
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void setDutyCycle(long ns) {
        lock.lock();
        try {
            ensureOpen("PWM set duty cycle", DUTY);
            writeDuty(ns, "PWM set duty cycle");
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void setPolarity(PwmPolarity polarity) {
        lock.lock();
        try {
            ensureOpen("PWM set polarity", POLARITY);
            writePolarity(polarity, "PWM set polarity");
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void setEnabled(boolean enabled) {
        lock.lock();
        try {
            ensureOpen(enabled ? "PWM enable" : "PWM disable", ENABLE);
            writeEnable(enabled, enabled ? "PWM enable" : "PWM disable");
        } finally {
            lock.unlock();
        }
    }

    private void writePeriod(long ns, String operation) {
        long r = writeNumber(PERIOD, ns);
        if (r < 0) {
            String detail = null;
            if (r == -Native.EINVAL) {
                detail = ns == 0 ? "the PWM core refuses a period of 0" : describeDutyOver(ns, true);
            }
            throw error(operation, paths[PERIOD], (int) -r, detail);
        }
    }

    private void writeDuty(long ns, String operation) {
        long r = writeNumber(DUTY, ns);
        if (r < 0) {
            throw error(operation, paths[DUTY], (int) -r, r == -Native.EINVAL ? describeDutyOver(ns, false) : null);
        }
    }

    /** Why the core refused: the duty cycle and the period that do not fit, if that is the reason. */
    private String describeDutyOver(long ns, boolean isPeriod) {
        try {
            if (isPeriod) {
                long duty = readNumber(fds[DUTY], "PWM get state", paths[DUTY]);
                return duty > ns ? "period " + ns + " ns is shorter than the duty cycle " + duty
                        + " ns (apply() changes both in a valid order)" : null;
            }
            long period = readNumber(fds[PERIOD], "PWM get state", paths[PERIOD]);
            return period == 0 ? "the period is 0: set it first"
                    : ns > period ? "duty cycle " + ns + " ns is longer than the period " + period
                            + " ns (apply() changes both in a valid order)" : null;
        } catch (HwException e) {
            return null;
        }
    }

    private void writePolarity(PwmPolarity p, String operation) {
        String s = p == PwmPolarity.INVERSED ? "inversed" : "normal";
        long r = writeText(fds[POLARITY], s);
        if (r < 0) {
            throw error(operation, paths[POLARITY], (int) -r, null);
        }
    }

    private void writeEnable(boolean on, String operation) {
        long r = writeNumber(ENABLE, on ? 1 : 0);
        if (r < 0) {
            throw error(operation, paths[ENABLE], (int) -r, null);
        }
    }

    @Override
    public String path() {
        return chipDir + "/pwm" + channel;
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            abandon();
        } finally {
            lock.unlock();
        }
    }
}
