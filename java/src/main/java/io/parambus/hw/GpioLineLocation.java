package io.parambus.hw;

/**
 * Where a named line is: found by {@link GpioChip#locateLine(String)} across the
 * system's chips.
 *
 * @param chipPath  the chip's device path, for {@link GpioChip#open(String)}
 * @param chipLabel the chip's label
 * @param offset    the line's offset on that chip
 */
public record GpioLineLocation(String chipPath, String chipLabel, int offset) {
}
