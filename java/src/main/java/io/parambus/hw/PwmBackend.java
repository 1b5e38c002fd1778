package io.parambus.hw;

/** The kernel interface a {@link Pwm} goes through ({@link Pwm#backend()}, {@link PwmOptions#backend()}). */
public enum PwmBackend {
    /**
     * The PWM character device {@code /dev/pwmchipN} (Linux 6.13 and later): the
     * channel is requested with {@code PWM_IOCTL_REQUEST}, and every change is one
     * {@code PWM_IOCTL_SETROUNDEDWF} carrying the whole waveform.
     */
    CHARDEV,
    /**
     * sysfs, {@code /sys/class/pwm/pwmchipN}: the channel is exported and its
     * attribute files ({@code period}, {@code duty_cycle}, {@code polarity},
     * {@code enable}) are kept open.
     */
    SYSFS
}
