package io.parambus.hw;

import java.util.EnumSet;
import java.util.Set;

/**
 * An I2C adapter's {@code I2C_FUNCS} mask (the whole {@code unsigned long} the kernel
 * writes), with its bits by name. Immutable.
 *
 * @param mask the kernel's mask of {@code I2C_FUNC_*} bits
 */
public record I2cFunctionality(long mask) {
    /** Whether the adapter has function f. */
    public boolean has(I2cFunction f) {
        return (mask & f.mask()) != 0;
    }

    /** The functions set in the mask (bits this binding does not name are in {@link #mask()} only). */
    public Set<I2cFunction> functions() {
        EnumSet<I2cFunction> s = EnumSet.noneOf(I2cFunction.class);
        for (I2cFunction f : I2cFunction.values()) {
            if (has(f)) {
                s.add(f);
            }
        }
        return s;
    }

    /** E.g. {@code "0x0c7f0000 [SMBUS_QUICK, SMBUS_READ_BYTE, ...]"}. */
    @Override
    public String toString() {
        return String.format("0x%08x %s", mask, functions());
    }
}
