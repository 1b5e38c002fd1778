package io.parambus.hw;

import io.parambus.ParambusException;
import io.parambus.internal.Native;

/**
 * A failed hardware operation: names the operation, the device and the errno the
 * kernel returned, e.g. {@code "GPIO line request on /dev/gpiochip0: EBUSY (Device or
 * resource busy)"}. Nothing in {@code io.parambus.hw} swallows an error: every failed
 * system call becomes one of these. Arguments refused before any system call (an
 * output value on an input, a speed of 0) are {@link IllegalArgumentException}s.
 */
public class HwException extends ParambusException {
    private static final long serialVersionUID = 1L;

    private final String operation;
    private final String device;
    private final int errnoValue;

    /** The operation (e.g. {@code "SPI transfer"}) on device (a path) failed with errno. */
    public HwException(String operation, String device, int errno) {
        this(operation, device, errno, null);
    }

    /** As {@link #HwException(String, String, int)}, with a detail appended to the message. */
    public HwException(String operation, String device, int errno, String detail) {
        super(Native.name(errno), operation + " on " + device + ": " + Native.name(errno) + " ("
                + Native.strerror(errno) + ")" + (detail == null ? "" : ": " + detail));
        this.operation = operation;
        this.device = device;
        this.errnoValue = errno;
    }

    /** The operation that failed, e.g. {@code "I2C_RDWR"} or {@code "GPIO set values"}. */
    public String operation() {
        return operation;
    }

    /** The device, e.g. {@code "/dev/i2c-1"}. */
    public String device() {
        return device;
    }

    /** The errno value (e.g. 16 for {@code EBUSY}); {@link #errno()} is its name. */
    public int errnoValue() {
        return errnoValue;
    }
}
