/**
 * Hardware straight to the kernel, in pure Java: GPIO (character device v2), I2C
 * (i2c-dev), SPI (spidev), PWM (sysfs, or the character device where the kernel has
 * one) and UART (termios2), through FFM downcalls to the C library's {@code open},
 * {@code ioctl}, {@code read}, {@code write}, {@code poll}, {@code epoll_*} and
 * {@code close}. No JNI, no JNA and no native library of the project's own.
 *
 * <p>Memory: every device object allocates the native structs its calls use once,
 * from an arena it owns and closes with itself; a call allocates nothing, Java or
 * native. Errors: every failed system call is a {@link io.parambus.hw.HwException}
 * naming the operation, the device and the errno. Nothing is specific to a board:
 * any chip, bus, chip select or mode the kernel offers can be used.
 *
 * <p>docs/java.md ("Hardware") is the guide; the behaviour matches libparambus-hw's
 * C API ({@code include/parambus/hw/}) where the two overlap.
 */
package io.parambus.hw;
