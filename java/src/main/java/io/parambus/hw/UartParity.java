package io.parambus.hw;

/**
 * The parity bit of a serial frame ({@link UartConfig#parity()}).
 *
 * <p>{@link #MARK} and {@link #SPACE} use the kernel's {@code CMSPAR} ("stick
 * parity"): the bit is sent as a constant 1 or 0. Drivers that cannot do it keep
 * another setting, which {@link Uart#config()} shows.
 */
public enum UartParity {
    /** No parity bit. */
    NONE,
    /** Odd parity ({@code PARENB | PARODD}). */
    ODD,
    /** Even parity ({@code PARENB}). */
    EVEN,
    /** The parity bit is always 1 ({@code PARENB | CMSPAR | PARODD}). */
    MARK,
    /** The parity bit is always 0 ({@code PARENB | CMSPAR}). */
    SPACE
}
