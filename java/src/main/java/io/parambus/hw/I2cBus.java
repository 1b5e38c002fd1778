package io.parambus.hw;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * An I2C bus: an i2c-dev node ({@code /dev/i2c-N}) opened by path, by bus number or by
 * the adapter's name, for what concerns the whole bus: the adapter's
 * {@link #functionality()}, {@code I2C_RDWR} transactions to any addresses
 * ({@link #transfer(I2cMessage...)}), and the {@link I2cDevice}s on it
 * ({@link #device(int, I2cDevice.Option...)}).
 *
 * <pre>{@code
 * try (I2cBus bus = I2cBus.openByName("pbus-mock-i2c");
 *      I2cDevice dac = bus.device(0x48)) {
 *     dac.writeRegister(0x10, (byte) 0x11, (byte) 0x22);   // ONE message: 10 11 22
 *     byte[] two = new byte[2];
 *     dac.readRegister(0x10, two);                         // [W: 10] [R: 2], repeated START
 *     int v = dac.smbusReadByteData(0x10);                 // I2C_SMBUS, nothing in between
 * }
 * }</pre>
 *
 * <p>Every device has a descriptor of its own, bound to its address once at open (i2c-dev
 * keeps the address, 10-bit mode and PEC per descriptor), so that a call is one ioctl
 * and devices on the same bus are used from different threads independently. Closing
 * the bus closes the devices opened through it.
 *
 * <p>Memory and threads: as {@link I2cDevice} (structs allocated once at open, calls
 * allocate nothing, any thread, calls serialised per descriptor).
 */
public final class I2cBus implements AutoCloseable {
    private static final String OPEN = "I2C open", FUNCS = "I2C functionality", TRANSFER = "I2C transfer";
    private static final String SYSFS = "/sys/class/i2c-dev";

    private final I2cFile file;
    private final List<I2cDevice> devices = new ArrayList<>();
    private boolean closed;

    private I2cBus(I2cFile file) {
        this.file = file;
    }

    /**
     * Opens an i2c-dev node, e.g. {@code "/dev/i2c-1"}.
     *
     * @throws HwException ENOENT (no such node: is i2c-dev loaded?), EACCES, ENOTTY (not an
     *         i2c-dev node)
     */
    public static I2cBus open(String path) {
        Objects.requireNonNull(path, "path");
        return new I2cBus(I2cFile.open(OPEN, path));
    }

    /** Opens {@code /dev/i2c-<bus>}. */
    public static I2cBus open(int bus) {
        if (bus < 0) {
            throw new IllegalArgumentException("I2C bus number " + bus);
        }
        return open("/dev/i2c-" + bus);
    }

    /**
     * Opens the bus whose adapter is named name ({@code /sys/class/i2c-dev/i2c-N/name},
     * e.g. {@code "SMBus stub driver"}): bus numbers are not stable, names are.
     *
     * @throws HwException ENOENT if no adapter has that name
     */
    public static I2cBus openByName(String name) {
        return open(pathOfAdapter(name));
    }

    /** The {@code /dev/i2c-N} of the adapter named name; HwException ENOENT if none. */
    public static String pathOfAdapter(String name) {
        Objects.requireNonNull(name, "name");
        try (DirectoryStream<Path> d = Files.newDirectoryStream(Path.of(SYSFS), "i2c-*")) {
            for (Path p : d) {
                Path n = p.resolve("name");
                if (Files.isReadable(n) && Files.readString(n, StandardCharsets.UTF_8).strip().equals(name)) {
                    return "/dev/" + p.getFileName();
                }
            }
        } catch (IOException e) {
            throw new HwException("I2C adapter lookup", SYSFS, 2, e.toString());
        }
        throw new HwException("I2C adapter lookup", SYSFS, 2, "no adapter named '" + name + "'");
    }

    /** The node's path. */
    public String path() {
        return file.path();
    }

    /** The adapter's functionality, read again ({@code I2C_FUNCS}). */
    public I2cFunctionality functionality() {
        return new I2cFunctionality(file.readFunctionality(FUNCS));
    }

    /**
     * Opens the device at address on this bus (a descriptor of its own: see the class
     * comment). See {@link I2cDevice#open(String, int, I2cDevice.Option...)}.
     */
    public I2cDevice device(int address, I2cDevice.Option... options) {
        synchronized (devices) {
            if (closed) {
                throw new HwException("I2C open", file.path(), 9, "the bus is closed");
            }
            I2cDevice d = I2cDevice.open(file.path(), address, this, options);
            devices.add(d);
            return d;
        }
    }

    void forget(I2cDevice d) {
        synchronized (devices) {
            devices.remove(d);
        }
    }

    /**
     * {@code I2C_RDWR}: the messages as one transaction (START, message, repeated START,
     * ..., STOP), each to its own address, the read messages filled in place. 1 to 42
     * messages ({@code I2C_RDWR_IOCTL_MAX_MSGS}), each up to 8192 bytes. Allocates nothing
     * (the messages are the caller's, and may be kept and transferred again).
     *
     * @throws HwException EOPNOTSUPP (an SMBus-only adapter, e.g. i2c-stub), ENXIO or
     *         EREMOTEIO (no acknowledgement), ETIMEDOUT, EAGAIN, EINVAL (a flag or length
     *         the kernel refuses), EIO (fewer messages done than asked)
     */
    public void transfer(I2cMessage... messages) {
        file.transfer(TRANSFER, messages, messages.length);
    }

    /** {@link #transfer(I2cMessage...)} of messages[0, count): a kept array used for shorter transactions too. */
    public void transfer(I2cMessage[] messages, int count) {
        Objects.checkFromIndexSize(0, count, messages.length);
        file.transfer(TRANSFER, messages, count);
    }

    /** Closes the devices opened through this bus, then the bus's own descriptor; idempotent. */
    @Override
    public void close() {
        List<I2cDevice> open;
        synchronized (devices) {
            closed = true;
            open = new ArrayList<>(devices);
        }
        for (I2cDevice d : open) {
            d.close();
        }
        file.close();
    }

    /** E.g. {@code "I2cBus[/dev/i2c-1]"}. */
    @Override
    public String toString() {
        return "I2cBus[" + file.path() + "]";
    }
}
