package io.parambus.hw;

/**
 * A GPIO chip as {@code GPIO_GET_CHIPINFO_IOCTL} describes it.
 *
 * @param path  the device path it was opened with, e.g. {@code "/dev/gpiochip0"}
 * @param name  the kernel's name, e.g. {@code "gpiochip0"}
 * @param label the driver's label, e.g. {@code "pinctrl-bcm2711"} (may be empty)
 * @param lines the number of lines
 */
public record GpioChipInfo(String path, String name, String label, int lines) {
}
