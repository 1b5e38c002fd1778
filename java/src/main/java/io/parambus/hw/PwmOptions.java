package io.parambus.hw;

import java.time.Duration;
import java.util.Objects;

/**
 * How {@link Pwm#open(int, int, PwmOptions)} takes a channel.
 *
 * @param backend the kernel interface to use, or null for the character device where
 *     the kernel has one and sysfs otherwise (the default)
 * @param exportTimeout how long to wait, through sysfs, for a freshly exported
 *     channel's attribute files to appear and become writable (udev may change their
 *     owner and mode a moment after the export); default 2 s
 * @param keepExported through sysfs, leave a channel this object exported exported
 *     when it is closed (default: unexport it, leaving the system as it was)
 */
public record PwmOptions(PwmBackend backend, Duration exportTimeout, boolean keepExported) {
    /** Automatic backend, 2 s export timeout, unexport on close. */
    public static final PwmOptions DEFAULT = new PwmOptions(null, Duration.ofSeconds(2), false);

    /** Checks the timeout (not negative). */
    public PwmOptions {
        Objects.requireNonNull(exportTimeout, "exportTimeout");
        if (exportTimeout.isNegative()) {
            throw new IllegalArgumentException("export timeout " + exportTimeout + " is negative");
        }
    }

    /** These options with another backend (null: automatic). */
    public PwmOptions withBackend(PwmBackend b) {
        return new PwmOptions(b, exportTimeout, keepExported);
    }

    /** These options with another export timeout. */
    public PwmOptions withExportTimeout(Duration t) {
        return new PwmOptions(backend, t, keepExported);
    }

    /** These options with keepExported set. */
    public PwmOptions withKeepExported(boolean keep) {
        return new PwmOptions(backend, exportTimeout, keep);
    }
}
