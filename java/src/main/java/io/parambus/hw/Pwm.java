package io.parambus.hw;

import io.parambus.internal.Native;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * One PWM channel: any channel of any PWM chip the kernel knows.
 *
 * <p><b>Two kernel interfaces.</b> The PWM character device {@code /dev/pwmchipN}
 * (Linux 6.13 and later) where the kernel has it, sysfs
 * ({@code /sys/class/pwm/pwmchipN}) otherwise, chosen when the channel is opened by
 * whether the node exists ({@link PwmOptions#backend()} forces one). Through the
 * character device every change is one ioctl with the whole state; through sysfs the
 * channel is exported (and unexported on close, unless someone else had exported it
 * or {@link PwmOptions#keepExported()}), with the races of a fresh export handled:
 * its files appear and become writable (udev) a moment after the export, and are
 * waited for up to {@link PwmOptions#exportTimeout()}.
 *
 * <p><b>Valid changes always succeed.</b> The kernel refuses a duty cycle longer than
 * the period, and sysfs changes one value at a time, so {@link #apply(PwmState)}
 * writes them in an order whose every intermediate state is valid (when the period
 * shrinks, the duty cycle is lowered first; when it grows, the period goes first) and
 * changes the polarity only while the output is stopped. The single setters write one
 * value, which the kernel may refuse: a {@link HwException} {@code EINVAL} says why.
 *
 * <p><b>Finding a chip.</b> Chip numbers are given out as chips register: a chip
 * removed and added again (driver rebind, module reload, overlay) may come back under
 * another number. {@link #open(String, int, PwmOptions)} names the chip by its device
 * (e.g. {@code "pbus-mock-pwm.0"}, {@code "fe20c000.pwm"}, or the device's
 * {@code /sys/devices/...} path) and looks the number up at every open. A channel
 * whose chip was removed fails every call with {@code ENODEV} (its files belong to
 * the old chip, so it can never act on the new one, not even when closed): close it
 * and open it again.
 *
 * <p><b>Memory and threads.</b> The per-call paths allocate nothing (the numbers are
 * formatted into a buffer of this object, the ioctl struct is this object's);
 * {@link #setDutyCycle(long)} is one {@code pwrite()} or one ioctl. Calls are
 * serialised by a lock; any thread may use the object.
 *
 * <p><b>Errors.</b> Every failed system call is a {@link HwException} naming the
 * operation, the attribute file (sysfs) or device node, and the errno; arguments out
 * of range are {@link IllegalArgumentException}s, before anything is written.
 */
public final class Pwm implements AutoCloseable {
    /** What a backend does: the operations of {@link Pwm}, each holding the backend's lock. */
    interface Impl {
        /** The state as the kernel holds it. */
        PwmState state();

        /** Applies a whole (valid) state. */
        void apply(PwmState target);

        /** Writes the period. */
        void setPeriod(long ns);

        /** Writes the duty cycle. */
        void setDutyCycle(long ns);

        /** Writes the polarity. */
        void setPolarity(PwmPolarity polarity);

        /** Starts or stops the output. */
        void setEnabled(boolean enabled);

        /** The channel's directory (sysfs) or the device node. */
        String path();

        /** Releases the channel; idempotent. */
        void close();
    }

    private final Impl impl;
    private final PwmBackend backend;
    private final int chip;
    private final int channel;

    private Pwm(Impl impl, PwmBackend backend, int chip, int channel) {
        this.impl = impl;
        this.backend = backend;
        this.chip = chip;
        this.channel = channel;
    }

    /** Opens channel of chip N with {@link PwmOptions#DEFAULT}. */
    public static Pwm open(int chip, int channel) {
        return open(chip, channel, PwmOptions.DEFAULT);
    }

    /**
     * Opens channel (0 to the chip's {@code npwm} - 1) of PWM chip N
     * ({@code /dev/pwmchipN} or {@code /sys/class/pwm/pwmchipN}).
     *
     * @throws HwException {@code ENOENT} (no such chip), {@code EINVAL} (no such
     *     channel), {@code EBUSY} (a kernel driver, or another user of the character
     *     device, holds the channel), {@code ETIMEDOUT} (an exported channel's files
     *     did not become usable in time), {@code EOPNOTSUPP} (the character device was
     *     asked for and the kernel has none), {@code EACCES}, ...
     */
    public static Pwm open(int chip, int channel, PwmOptions options) {
        if (chip < 0 || channel < 0) {
            throw new IllegalArgumentException("negative chip " + chip + " or channel " + channel);
        }
        Objects.requireNonNull(options, "options");
        if (options.backend() != PwmBackend.SYSFS) {
            PwmChardev c = PwmChardev.open(chip, channel);
            if (c != null) {
                return new Pwm(c, PwmBackend.CHARDEV, chip, channel);
            }
            if (options.backend() == PwmBackend.CHARDEV) {
                String sysfs = PwmSysfs.CLASS_DIR + "/pwmchip" + chip;
                if (Files.isDirectory(Path.of(sysfs))) {
                    throw new HwException("PWM open", PwmChardev.devicePath(chip), 95,
                            "this kernel has no PWM character device (Linux 6.13 and later); " + sysfs
                                    + " exists: use the sysfs backend");
                }
                throw new HwException("PWM open", PwmChardev.devicePath(chip), Native.ENOENT, "no such PWM chip");
            }
        }
        return new Pwm(PwmSysfs.open(chip, channel, options), PwmBackend.SYSFS, chip, channel);
    }

    /**
     * Opens channel of the PWM chip of device (see {@link #findChip(String)}): the way
     * to name a chip that stays right when the chip's number changes.
     */
    public static Pwm open(String device, int channel, PwmOptions options) {
        return open(findChip(device), channel, options);
    }

    /**
     * The number N of the PWM chip ({@code pwmchipN}) whose device is device: the
     * device's name (the last part of {@code /sys/class/pwm/pwmchipN/device}, e.g.
     * {@code "pbus-mock-pwm.0"} or {@code "fe20c000.pwm"}) or a sysfs path of it
     * ({@code /sys/devices/...}, or a link to it such as {@code /sys/bus/platform/devices/...}).
     * The lowest N if the device has several chips.
     *
     * @throws HwException {@code ENOENT} naming {@code /sys/class/pwm} if no chip has that device
     */
    public static int findChip(String device) {
        Objects.requireNonNull(device, "device");
        if (device.isEmpty()) {
            throw new IllegalArgumentException("empty device name");
        }
        Path wanted = null;
        if (device.startsWith("/")) {
            try {
                wanted = Path.of(device).toRealPath(); // e.g. /sys/bus/platform/devices/X, a link
            } catch (IOException e) {
                throw new HwException("PWM chip lookup", device, Native.ENOENT, "no such device");
            }
        }
        int best = -1;
        try (DirectoryStream<Path> d = Files.newDirectoryStream(Path.of(PwmSysfs.CLASS_DIR), "pwmchip*")) {
            for (Path p : d) {
                int n;
                try {
                    n = Integer.parseInt(p.getFileName().toString().substring("pwmchip".length()));
                } catch (NumberFormatException e) {
                    continue;
                }
                Path target;
                try {
                    target = p.resolve("device").toRealPath();
                } catch (IOException e) {
                    continue; // a chip going away meanwhile
                }
                boolean match = wanted != null ? target.equals(wanted)
                        : target.getFileName().toString().equals(device);
                if (match && (best < 0 || n < best)) {
                    best = n;
                }
            }
        } catch (NoSuchFileException e) {
            throw new HwException("PWM chip lookup", PwmSysfs.CLASS_DIR, Native.ENOENT, "no PWM class in sysfs");
        } catch (IOException e) {
            throw new HwException("PWM chip lookup", PwmSysfs.CLASS_DIR, 5, e.toString());
        }
        if (best < 0) {
            throw new HwException("PWM chip lookup", PwmSysfs.CLASS_DIR, Native.ENOENT,
                    "no PWM chip belongs to device " + device);
        }
        return best;
    }

    /** The interface in use. */
    public PwmBackend backend() {
        return backend;
    }

    /** The chip's number N, as when opened. */
    public int chip() {
        return chip;
    }

    /** The channel's number within its chip. */
    public int channel() {
        return channel;
    }

    /** The channel's sysfs directory ({@code .../pwmchipN/pwmK}) or the device node ({@code /dev/pwmchipN}). */
    public String path() {
        return impl.path();
    }

    /** The channel's state as the kernel holds it. */
    public PwmState state() {
        return impl.state();
    }

    /**
     * Applies a whole state, in an order that keeps every intermediate state valid
     * (see the class comment). Through sysfs a failure may leave some of the new values
     * applied; {@link #state()} tells which.
     */
    public void apply(PwmState target) {
        impl.apply(Objects.requireNonNull(target, "target"));
    }

    /**
     * {@link #apply(PwmState)} of the given values.
     *
     * @throws IllegalArgumentException (nothing written) if the duty cycle is negative or longer than the period
     */
    public void apply(long periodNs, long dutyCycleNs, PwmPolarity polarity, boolean enabled) {
        impl.apply(new PwmState(periodNs, dutyCycleNs, polarity, enabled));
    }

    /** Sets the period in ns; the kernel refuses (EINVAL) one shorter than the duty cycle. */
    public void setPeriod(long ns) {
        checkNs(ns, "period");
        impl.setPeriod(ns);
    }

    /**
     * Sets the duty cycle in ns; the kernel refuses (EINVAL) one longer than the period.
     * The hot path: one {@code pwrite()} or one ioctl, nothing allocated.
     */
    public void setDutyCycle(long ns) {
        checkNs(ns, "duty cycle");
        impl.setDutyCycle(ns);
    }

    /** Sets the polarity (some drivers refuse a change while the output runs: apply() stops it around the change). */
    public void setPolarity(PwmPolarity polarity) {
        impl.setPolarity(Objects.requireNonNull(polarity, "polarity"));
    }

    /** Starts or stops the output (the kernel refuses to start one whose period is 0). */
    public void setEnabled(boolean enabled) {
        impl.setEnabled(enabled);
    }

    private static void checkNs(long ns, String what) {
        if (ns < 0) {
            throw new IllegalArgumentException("negative " + what + " " + ns + " ns");
        }
    }

    /**
     * Releases the channel: through sysfs its files are closed and it is unexported if
     * this object exported it (and {@link PwmOptions#keepExported()} is false); through
     * the character device it is freed. The output is left as it is: disable it first
     * if it must stop. Idempotent, and never fails (a removed chip has nothing to undo).
     */
    @Override
    public void close() {
        impl.close();
    }

    /** The channel and its interface. */
    @Override
    public String toString() {
        return "Pwm[" + impl.path() + ", " + backend + "]";
    }
}
