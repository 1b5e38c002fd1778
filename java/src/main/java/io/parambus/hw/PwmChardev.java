package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.parambus.internal.Native;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;

/**
 * A PWM channel through the PWM character device {@code /dev/pwmchipN}.
 *
 * <p>The uAPI is Linux 6.13's {@code include/uapi/linux/pwm.h}, declared here once
 * because the system headers this project builds against (Linux 6.1) predate it;
 * {@code PwmLayoutTest} compares it with the same declarations compiled by the C
 * compiler (and with the real header where one is installed). <b>Not exercised by
 * the project's VM tests</b>: their 6.1 kernel has no PWM character device, so only
 * the detection of its absence (and the fallback to sysfs) is tested.
 *
 * <p>The kernel describes a channel by a waveform: period, duty length and duty
 * offset, period 0 meaning off; each change is one {@code PWM_IOCTL_SETROUNDEDWF}
 * with the whole waveform, so period, duty cycle, polarity and enable change
 * together and no write order matters. The logical state (period, duty cycle,
 * polarity, enabled) is kept here and turned into a waveform on every change:
 * inversed polarity with duty d is the waveform whose active part starts at
 * offset d and lasts period - d.
 *
 * <p>Threads: every call holds the device file's lock.
 */
final class PwmChardev implements Pwm.Impl {
    /** {@code struct pwmchip_waveform} (32 bytes). */
    static final StructLayout WAVEFORM = MemoryLayout.structLayout(
            JAVA_INT.withName("hwpwm"),
            JAVA_INT.withName("__pad"),
            JAVA_LONG.withName("period_length_ns"),
            JAVA_LONG.withName("duty_length_ns"),
            JAVA_LONG.withName("duty_offset_ns"));
    static final long HWPWM = offset("hwpwm"), PERIOD_LENGTH = offset("period_length_ns"),
            DUTY_LENGTH = offset("duty_length_ns"), DUTY_OFFSET = offset("duty_offset_ns");

    private static long offset(String field) {
        return WAVEFORM.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }

    /** The ioctl type of the PWM character device ('u'). */
    static final int TYPE = 0x75;
    static final long REQUEST = Ioc.io(TYPE, 1), FREE = Ioc.io(TYPE, 2),
            ROUNDWF = Ioc.iowr(TYPE, 3, WAVEFORM.byteSize()), GETWF = Ioc.iowr(TYPE, 4, WAVEFORM.byteSize()),
            SETROUNDEDWF = Ioc.iow(TYPE, 5, WAVEFORM.byteSize()), SETEXACTWF = Ioc.iow(TYPE, 6, WAVEFORM.byteSize());

    private final DeviceFile file;
    private final int channel;
    private final MemorySegment wf;
    /* The logical state behind the waveform (file lock). */
    private long period;
    private long duty;
    private boolean inversed;
    private boolean enabled;

    private PwmChardev(DeviceFile file, int channel) {
        this.file = file;
        this.channel = channel;
        this.wf = file.arena().allocate(WAVEFORM);
    }

    /** The character device's path for chip. */
    static String devicePath(int chip) {
        return "/dev/pwmchip" + chip;
    }

    /** Opens the chip's character device and requests channel; null if the kernel has no such node. */
    static PwmChardev open(int chip, int channel) {
        DeviceFile f;
        try {
            f = DeviceFile.open("PWM open", devicePath(chip), Native.O_RDWR);
        } catch (HwException e) {
            if (e.errnoValue() == Native.ENOENT) {
                return null;
            }
            throw e;
        }
        try {
            PwmChardev c = new PwmChardev(f, channel);
            f.lock().lock();
            try {
                f.ioctl("PWM request (PWM_IOCTL_REQUEST) of channel " + channel, REQUEST, channel);
                c.getWaveform("PWM open (PWM_IOCTL_GETWF)");
                c.fromWaveform();
            } finally {
                f.lock().unlock();
            }
            return c;
        } catch (RuntimeException | Error e) {
            f.close(); // closing the descriptor frees a requested channel
            throw e;
        }
    }

    private void getWaveform(String operation) {
        wf.fill((byte) 0);
        wf.set(JAVA_INT, HWPWM, channel);
        file.ioctl(operation, GETWF, wf);
    }

    /** The logical state from the waveform the kernel returned (period 0: off, the rest kept). */
    private void fromWaveform() {
        long p = wf.get(JAVA_LONG, PERIOD_LENGTH);
        if (p == 0) {
            enabled = false;
            return;
        }
        long length = wf.get(JAVA_LONG, DUTY_LENGTH);
        long offset = wf.get(JAVA_LONG, DUTY_OFFSET);
        enabled = true;
        period = p;
        inversed = offset != 0 && offset + length >= p;
        duty = inversed ? offset : length;
    }

    private void send(String operation, long p, long d, boolean inv, boolean on) {
        if (on && p == 0) {
            throw new HwException(operation, file.path(), Native.EINVAL, "an enabled output needs a period above 0");
        }
        if (d > p) {
            throw new HwException(operation, file.path(), Native.EINVAL, "duty cycle " + d
                    + " ns is longer than the period " + p + " ns (apply() changes both)");
        }
        wf.fill((byte) 0);
        wf.set(JAVA_INT, HWPWM, channel);
        if (on) {
            wf.set(JAVA_LONG, PERIOD_LENGTH, p);
            wf.set(JAVA_LONG, DUTY_LENGTH, inv ? p - d : d);
            wf.set(JAVA_LONG, DUTY_OFFSET, inv ? d : 0);
        }
        file.ioctl(operation, SETROUNDEDWF, wf);
        period = p;
        duty = d;
        inversed = inv;
        enabled = on;
    }

    @Override
    public PwmState state() {
        file.lock().lock();
        try {
            getWaveform("PWM get state (PWM_IOCTL_GETWF)");
            fromWaveform();
            return new PwmState(period, Math.min(duty, period), inversed ? PwmPolarity.INVERSED : PwmPolarity.NORMAL,
                    enabled);
        } finally {
            file.lock().unlock();
        }
    }

    @Override
    public void apply(PwmState s) {
        file.lock().lock();
        try {
            send("PWM apply (PWM_IOCTL_SETROUNDEDWF)", s.periodNs(), s.dutyCycleNs(),
                    s.polarity() == PwmPolarity.INVERSED, s.enabled());
        } finally {
            file.lock().unlock();
        }
    }

    @Override
    public void setPeriod(long ns) {
        file.lock().lock();
        try {
            send("PWM set period (PWM_IOCTL_SETROUNDEDWF)", ns, duty, inversed, enabled);
        } finally {
            file.lock().unlock();
        }
    }

    @Override
    public void setDutyCycle(long ns) {
        file.lock().lock();
        try {
            send("PWM set duty cycle (PWM_IOCTL_SETROUNDEDWF)", period, ns, inversed, enabled);
        } finally {
            file.lock().unlock();
        }
    }

    @Override
    public void setPolarity(PwmPolarity polarity) {
        file.lock().lock();
        try {
            send("PWM set polarity (PWM_IOCTL_SETROUNDEDWF)", period, duty, polarity == PwmPolarity.INVERSED,
                    enabled);
        } finally {
            file.lock().unlock();
        }
    }

    @Override
    public void setEnabled(boolean on) {
        file.lock().lock();
        try {
            send(on ? "PWM enable (PWM_IOCTL_SETROUNDEDWF)" : "PWM disable (PWM_IOCTL_SETROUNDEDWF)", period, duty,
                    inversed, on);
        } finally {
            file.lock().unlock();
        }
    }

    @Override
    public String path() {
        return file.path();
    }

    @Override
    public void close() {
        file.lock().lock();
        try {
            if (!file.isClosed()) {
                // Errors ignored (the chip may be gone): closing the descriptor frees the channel anyway.
                Native.ioctl(file.fd("PWM free"), FREE, channel, file.capture());
            }
        } finally {
            file.lock().unlock();
        }
        file.close();
    }
}
