package io.parambus.hw;

import java.util.Objects;

/**
 * The settings of a serial port: baud rate, framing and flow control.
 *
 * <p>The baud rate is any positive number, not only one of the classic
 * {@code Bxxx} rates: {@link Uart} sets it through termios2 with {@code BOTHER},
 * and the driver makes the nearest rate it can (a 16550 clocked at 1.8432 MHz
 * tops out at 115200, a pseudo-terminal stores any rate exactly).
 * {@link Uart#config()} reads back what the driver holds.
 *
 * <p>An immutable value; the {@code with...} methods return a modified copy.
 *
 * @param baudRate the rate in bits per second, at least 1
 * @param dataBits bits per character, 5 to 8
 * @param parity the parity bit
 * @param stopBits 1 or 2
 * @param flowControl how the port holds back the other side
 */
public record UartConfig(int baudRate, int dataBits, UartParity parity, int stopBits, UartFlowControl flowControl) {
    /** Checks the values; every one out of range is an {@link IllegalArgumentException}. */
    public UartConfig {
        if (baudRate < 1) {
            throw new IllegalArgumentException("baud rate " + baudRate + " is not positive");
        }
        if (dataBits < 5 || dataBits > 8) {
            throw new IllegalArgumentException("data bits " + dataBits + " is not 5, 6, 7 or 8");
        }
        if (stopBits != 1 && stopBits != 2) {
            throw new IllegalArgumentException("stop bits " + stopBits + " is not 1 or 2");
        }
        Objects.requireNonNull(parity, "parity");
        Objects.requireNonNull(flowControl, "flowControl");
    }

    /** {@code baudRate} 8N1 (8 data bits, no parity, 1 stop bit), no flow control. */
    public static UartConfig of(int baudRate) {
        return new UartConfig(baudRate, 8, UartParity.NONE, 1, UartFlowControl.NONE);
    }

    /** This configuration with another baud rate. */
    public UartConfig withBaudRate(int rate) {
        return new UartConfig(rate, dataBits, parity, stopBits, flowControl);
    }

    /** This configuration with another number of data bits (5 to 8). */
    public UartConfig withDataBits(int bits) {
        return new UartConfig(baudRate, bits, parity, stopBits, flowControl);
    }

    /** This configuration with another parity. */
    public UartConfig withParity(UartParity p) {
        return new UartConfig(baudRate, dataBits, p, stopBits, flowControl);
    }

    /** This configuration with another number of stop bits (1 or 2). */
    public UartConfig withStopBits(int bits) {
        return new UartConfig(baudRate, dataBits, parity, bits, flowControl);
    }

    /** This configuration with another flow control. */
    public UartConfig withFlowControl(UartFlowControl f) {
        return new UartConfig(baudRate, dataBits, parity, stopBits, f);
    }

    /** Bits on the wire per character: start bit, data bits, parity bit if any, stop bits. */
    public int bitsPerCharacter() {
        return 1 + dataBits + (parity == UartParity.NONE ? 0 : 1) + stopBits;
    }

    /** The usual short form, e.g. {@code "9600 7E2"} or {@code "115200 8N1 RTS_CTS"}. */
    @Override
    public String toString() {
        return baudRate + " " + dataBits + "NOEMS".charAt(parity.ordinal()) + stopBits
                + (flowControl == UartFlowControl.NONE ? "" : " " + flowControl);
    }
}
