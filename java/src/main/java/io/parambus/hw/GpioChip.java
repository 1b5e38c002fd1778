package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.parambus.internal.Native;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * An open GPIO chip, {@code /dev/gpiochipN}, through the kernel's character device
 * (uAPI v2, Linux 5.10 or later): chip and line information, line-info watches, and
 * {@linkplain #request(GpioRequestConfig) requests} of lines.
 *
 * <pre>{@code
 * try (GpioChip chip = GpioChip.openByLabel("pinctrl-bcm2711");
 *      GpioRequest led = chip.request(GpioRequestConfig.builder()
 *              .line(chip.findLine("LED0").orElseThrow(), GpioLineSettings.output(true).build()).build())) {
 *     led.setValue(led.offset(0), false);
 * }
 * }</pre>
 *
 * <p>A request lives independently of the chip it came from: the chip may be closed
 * while its requests are in use.
 *
 * <p>Threads: every method may be called from any thread; calls are serialised (they
 * share the chip's native scratch structs). {@link #readInfoEvent(Duration)} waits
 * without blocking the other calls, and refuses a blocking wait on a virtual thread.
 *
 * <p>Memory: the structs of every call are allocated once, at open, and freed by
 * {@link #close()}.
 *
 * <p>Errors: a failed system call is a {@link HwException} naming the operation, the
 * chip's path and the errno ({@code ENODEV} once the chip was removed); arguments are
 * checked before any call ({@link IllegalArgumentException}).
 */
public final class GpioChip implements AutoCloseable {
    private static final String DEV = "/dev";

    private final DeviceFile file;
    private final GpioWaiter waiter;
    private final MemorySegment chipInfo, lineInfo, request, changed, u32;
    private final String name, label;
    private final int lines;

    private GpioChip(DeviceFile file) {
        this.file = file;
        try {
            this.chipInfo = file.arena().allocate(GpioUapi.CHIP_INFO);
            this.lineInfo = file.arena().allocate(GpioUapi.LINE_INFO);
            this.request = file.arena().allocate(GpioUapi.LINE_REQUEST);
            this.changed = file.arena().allocate(GpioUapi.LINE_INFO_CHANGED);
            this.u32 = file.arena().allocate(JAVA_INT);
            file.lock().lock();
            try {
                file.ioctl("GPIO chip info", GpioUapi.GET_CHIPINFO, chipInfo);
                name = GpioUapi.string(chipInfo, GpioUapi.CHIP_INFO_NAME, GpioUapi.NAME_SIZE);
                label = GpioUapi.string(chipInfo, GpioUapi.CHIP_INFO_LABEL, GpioUapi.NAME_SIZE);
                lines = chipInfo.get(JAVA_INT, GpioUapi.CHIP_INFO_LINES);
            } finally {
                file.lock().unlock();
            }
            this.waiter = new GpioWaiter(file, "GPIO chip open");
        } catch (RuntimeException | Error e) {
            file.close();
            throw e;
        }
    }

    /**
     * Opens a chip by device path, e.g. {@code "/dev/gpiochip0"}.
     *
     * @throws HwException {@code ENOENT} (no such file), {@code EACCES}, {@code ENOTTY}
     *                     (not a GPIO chip: the chip-info ioctl is refused), ...
     */
    public static GpioChip open(String path) {
        if (path.isEmpty()) {
            throw new IllegalArgumentException("GPIO chip open: empty path");
        }
        return new GpioChip(DeviceFile.open("GPIO chip open", path, Native.O_RDWR));
    }

    /** Opens {@code /dev/<name>}, e.g. name {@code "gpiochip2"}; as {@link #open(String)}. */
    public static GpioChip openByName(String name) {
        if (name.isEmpty() || name.indexOf('/') >= 0) {
            throw new IllegalArgumentException("GPIO chip open: '" + name + "' is not a device name like gpiochip0");
        }
        return open(DEV + "/" + name);
    }

    /**
     * Opens the first chip (lowest number) whose label is {@code label}.
     *
     * @throws HwException {@code ENOENT} if no chip that can be opened has that label
     */
    public static GpioChip openByLabel(String label) {
        for (GpioChipInfo c : list()) {
            if (c.label().equals(label)) {
                return open(c.path());
            }
        }
        throw new HwException("GPIO chip open by label", DEV + "/gpiochip* (label '" + label + "')",
                GpioUapi.ENOENT);
    }

    /**
     * Every GPIO chip of the system, in chip-number order. Chips this process may not open
     * ({@code EACCES}, {@code EPERM}) or that vanish while listed ({@code ENOENT},
     * {@code ENODEV}) are left out; any other failure is thrown.
     */
    public static List<GpioChipInfo> list() {
        List<Path> paths = new ArrayList<>();
        try (DirectoryStream<Path> d = Files.newDirectoryStream(Path.of(DEV), "gpiochip*")) {
            for (Path p : d) {
                if (chipNumber(p) >= 0) {
                    paths.add(p);
                }
            }
        } catch (NoSuchFileException e) {
            return List.of();
        } catch (IOException e) {
            throw new UncheckedIOException("GPIO chip list of " + DEV, e);
        }
        paths.sort(Comparator.comparingLong(GpioChip::chipNumber));
        List<GpioChipInfo> chips = new ArrayList<>();
        for (Path p : paths) {
            try (GpioChip c = open(p.toString())) {
                chips.add(new GpioChipInfo(c.path(), c.name, c.label, c.lines));
            } catch (HwException e) {
                int err = e.errnoValue();
                if (err != Native.EACCES && err != Native.EPERM && err != GpioUapi.ENOENT
                        && err != GpioUapi.ENODEV) {
                    throw e;
                }
            }
        }
        return chips;
    }

    private static long chipNumber(Path p) {
        String n = p.getFileName().toString();
        if (!n.startsWith("gpiochip") || n.length() == 8 || n.length() > 17) {
            return -1;
        }
        for (int i = 8; i < n.length(); i++) {
            if (n.charAt(i) < '0' || n.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(n.substring(8));
    }

    /** The line called {@code name} on any chip of the system (the first in chip-number order). */
    public static Optional<GpioLineLocation> locateLine(String name) {
        if (name.isEmpty()) {
            throw new IllegalArgumentException("GPIO line lookup: empty line name");
        }
        for (GpioChipInfo c : list()) {
            try (GpioChip chip = open(c.path())) {
                OptionalInt offset = chip.findLine(name);
                if (offset.isPresent()) {
                    return Optional.of(new GpioLineLocation(c.path(), c.label(), offset.getAsInt()));
                }
            }
        }
        return Optional.empty();
    }

    /** The path the chip was opened with. */
    public String path() {
        return file.path();
    }

    /** The kernel's name of the chip, e.g. {@code "gpiochip0"} (as read at open). */
    public String name() {
        return name;
    }

    /** The driver's label of the chip (as read at open). */
    public String label() {
        return label;
    }

    /** The number of lines (as read at open). */
    public int lineCount() {
        return lines;
    }

    /** Name, label and lines, asked of the kernel again (so {@code ENODEV} says the chip is gone). */
    public GpioChipInfo info() {
        file.lock().lock();
        try {
            file.fd("GPIO chip info");
            file.ioctl("GPIO chip info", GpioUapi.GET_CHIPINFO, chipInfo);
            return new GpioChipInfo(path(), GpioUapi.string(chipInfo, GpioUapi.CHIP_INFO_NAME, GpioUapi.NAME_SIZE),
                    GpioUapi.string(chipInfo, GpioUapi.CHIP_INFO_LABEL, GpioUapi.NAME_SIZE),
                    chipInfo.get(JAVA_INT, GpioUapi.CHIP_INFO_LINES));
        } finally {
            file.lock().unlock();
        }
    }

    private void checkOffset(String operation, int offset) {
        if (offset < 0 || offset >= lines) {
            throw new IllegalArgumentException(operation + " on " + path() + ": offset " + offset
                    + " is not one of the chip's " + lines + " lines");
        }
    }

    private GpioLineInfo lineInfo(String operation, long ioctl, int offset) {
        checkOffset(operation, offset);
        file.lock().lock();
        try {
            file.fd(operation);
            lineInfo.fill((byte) 0);
            lineInfo.set(JAVA_INT, GpioUapi.INFO_OFFSET, offset);
            file.ioctl(operation, ioctl, lineInfo);
            return GpioLineInfo.decode(lineInfo, 0);
        } finally {
            file.lock().unlock();
        }
    }

    /** The current state of line {@code offset} (GPIO_V2_GET_LINEINFO_IOCTL). */
    public GpioLineInfo lineInfo(int offset) {
        return lineInfo("GPIO line info", GpioUapi.V2_GET_LINEINFO, offset);
    }

    /** The offset of the line called {@code name} on this chip (the first if names repeat). */
    public OptionalInt findLine(String name) {
        if (name.isEmpty()) {
            throw new IllegalArgumentException("GPIO line lookup on " + path() + ": empty line name");
        }
        for (int i = 0; i < lines; i++) {
            if (lineInfo(i).name().equals(name)) {
                return OptionalInt.of(i);
            }
        }
        return OptionalInt.empty();
    }

    /**
     * Starts reporting changes of line {@code offset}'s configuration (requested,
     * released, reconfigured, by anyone) as events for {@link #readInfoEvent(Duration)},
     * and returns its current state.
     *
     * @throws HwException {@code EBUSY} if this chip object already watches the line
     */
    public GpioLineInfo watchLineInfo(int offset) {
        return lineInfo("GPIO line info watch", GpioUapi.V2_GET_LINEINFO_WATCH, offset);
    }

    /**
     * Stops reporting changes of line {@code offset}.
     *
     * @throws HwException {@code EBUSY} if the line is not watched through this chip object
     */
    public void unwatchLineInfo(int offset) {
        checkOffset("GPIO line info unwatch", offset);
        file.lock().lock();
        try {
            file.fd("GPIO line info unwatch");
            u32.set(JAVA_INT, 0, offset);
            file.ioctl("GPIO line info unwatch", GpioUapi.GET_LINEINFO_UNWATCH, u32);
        } finally {
            file.lock().unlock();
        }
    }

    /**
     * The next change of a watched line, waiting up to {@code timeout}; null if none came.
     * A non-zero timeout is refused on a virtual thread ({@link IllegalStateException}):
     * the wait blocks in {@code poll(2)}.
     */
    public GpioInfoEvent readInfoEvent(Duration timeout) {
        String op = "GPIO line info event read";
        GpioWaiter.refuseVirtualBlocking(op, timeout);
        long deadline = GpioWaiter.deadline(timeout);
        waiter.readerLock().lock();
        try {
            for (;;) {
                file.lock().lock();
                try {
                    file.fd(op);
                    long r = file.read(op, changed, changed.byteSize());
                    if (r == changed.byteSize()) {
                        int type = changed.get(JAVA_INT, GpioUapi.CHANGED_EVENT_TYPE);
                        GpioInfoEvent.Type t = switch (type) {
                            case GpioUapi.CHANGED_REQUESTED -> GpioInfoEvent.Type.REQUESTED;
                            case GpioUapi.CHANGED_RELEASED -> GpioInfoEvent.Type.RELEASED;
                            case GpioUapi.CHANGED_CONFIG -> GpioInfoEvent.Type.RECONFIGURED;
                            default -> throw new HwException(op, path(), GpioUapi.EIO, "unknown event type " + type);
                        };
                        return new GpioInfoEvent(t, changed.get(JAVA_LONG, GpioUapi.CHANGED_TIMESTAMP),
                                GpioLineInfo.decode(changed, GpioUapi.CHANGED_INFO));
                    }
                    if (r >= 0) {
                        throw new HwException(op, path(), GpioUapi.EIO, "read " + r + " of " + changed.byteSize()
                                + " bytes");
                    }
                    if (r != -Native.EAGAIN) {
                        throw new HwException(op, path(), (int) -r);
                    }
                } finally {
                    file.lock().unlock();
                }
                if (!waiter.await(op, deadline)) {
                    return null;
                }
            }
        } finally {
            waiter.readerLock().unlock();
        }
    }

    /**
     * Requests lines with one {@code GPIO_V2_GET_LINE_IOCTL}, each configured as
     * {@code config} says, outputs already at their initial values.
     *
     * @throws IllegalArgumentException an offset beyond the chip's lines
     * @throws HwException {@code EBUSY} (a line is already requested, by anyone),
     *                     {@code EOPNOTSUPP} (a setting the chip or kernel cannot do, e.g.
     *                     the HTE clock without {@code CONFIG_HTE}), {@code EINVAL},
     *                     {@code ENODEV} (the chip was removed)
     */
    public GpioRequest request(GpioRequestConfig config) {
        String op = "GPIO line request";
        for (int o : config.offsetsShared()) {
            checkOffset(op, o);
        }
        int fd;
        file.lock().lock();
        try {
            file.fd(op);
            config.writeRequest(request);
            file.ioctl(op, GpioUapi.V2_GET_LINE, request);
            fd = request.get(JAVA_INT, GpioUapi.REQUEST_FD);
        } finally {
            file.lock().unlock();
        }
        // The kernel creates the line descriptor O_CLOEXEC.
        return new GpioRequest(path(), fd, config.offsetsShared().clone(), config.settingsShared().clone());
    }

    /** Closes the chip; idempotent. Requests made from it stay valid. Waits for a running {@link #readInfoEvent}. */
    @Override
    public void close() {
        waiter.readerLock().lock();
        try {
            file.close();
        } finally {
            waiter.readerLock().unlock();
        }
    }

    @Override
    public String toString() {
        return "GpioChip[" + path() + ", " + name + ", '" + label + "', " + lines + " lines]";
    }
}
