package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.parambus.internal.Native;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Lines of one chip, requested together ({@link GpioChip#request(GpioRequestConfig)})
 * and held by one file descriptor: their values are read and written with one ioctl for
 * any subset, their configuration changed with one more, and the edge events of all of
 * them arrive on that descriptor, read in batches ({@link #readEvents}) or delivered to
 * listeners by a {@link GpioEventPoller}.
 *
 * <pre>{@code
 * GpioRequestConfig config = GpioRequestConfig.builder()
 *         .lines(GpioLineSettings.output(false).build(), 17, 18, 19)
 *         .build();
 * try (GpioRequest outputs = chip.request(config)) {
 *     outputs.setValues(0b111, 0b101);   // indexes 0 and 2 (offsets 17 and 19) high, in one ioctl
 *     outputs.setValue(18, true);        // by offset
 * }
 * }</pre>
 *
 * <p>Indexes and offsets: masks ({@link #getValues(long)}, {@link #setValues(long, long)})
 * select lines by request index (bit i = the i-th line of the config), as the kernel's
 * do; {@link #getValue(int)} and {@link #setValue(int, boolean)} take chip offsets.
 *
 * <p>Threads: every method may be called from any thread; the ioctls are serialised (they
 * share the request's native {@code gpio_v2_line_values}). Reading events does not block
 * them: {@link #readEvents} waits outside that lock.
 *
 * <p>Memory: {@link #getValues}, {@link #setValues}, {@link #getValue}, {@link #setValue}
 * and {@link #readEvents} allocate nothing, Java or native: their structs are allocated
 * once, at request time, in the request's arena, freed by {@link #close()}. Get and set
 * allocate nothing whichever JIT compiles the caller: their ioctl goes without the
 * linker's errno capture (which allocates unless C2 compiled the caller), and only a
 * failed one is made again with it, to name the errno.
 *
 * <p>Errors: a failed system call is a {@link HwException} naming the operation, the
 * chip's path and lines, and the errno ({@code ENODEV} once the chip was removed,
 * {@code EPERM} for setting an input); arguments are checked before any call.
 */
public final class GpioRequest implements AutoCloseable {
    private final String chipPath;
    private final DeviceFile file;
    private final GpioWaiter waiter;
    private final int[] offsets;
    private final GpioLineSettings[] settings;
    private final long allMask;
    private final MemorySegment values;
    private final MemorySegment config;
    /** Serialises attaching to a poller against close(). */
    private final ReentrantLock stateLock = new ReentrantLock();
    private volatile GpioEventPoller.Attachment attachment;
    private boolean closed;
    /** Whether readEvents ever read an event (a poller attached later cannot count gaps from seqno 1). */
    private volatile boolean eventsRead;

    GpioRequest(String chipPath, int fd, int[] offsets, GpioLineSettings[] settings) {
        this.chipPath = chipPath;
        this.offsets = offsets;
        this.settings = settings;
        this.allMask = offsets.length == 64 ? -1L : (1L << offsets.length) - 1;
        this.file = DeviceFile.adopt(chipPath + " lines " + GpioRequestConfig.describe(offsets), fd);
        try {
            this.values = file.arena().allocate(GpioUapi.LINE_VALUES);
            this.config = file.arena().allocate(GpioUapi.LINE_CONFIG);
            this.waiter = new GpioWaiter(file, "GPIO line request");
        } catch (RuntimeException | Error e) {
            file.close();
            throw e;
        }
    }

    /**
     * Adopts {@code fd} as the descriptor of a request of {@code offsets} (the tests feed
     * edge records through a pipe this way). The request owns the descriptor from now on.
     */
    static GpioRequest adopt(String device, int fd, int[] offsets, GpioLineSettings settings) {
        GpioLineSettings[] s = new GpioLineSettings[offsets.length];
        Arrays.fill(s, settings);
        return new GpioRequest(device, fd, offsets.clone(), s);
    }

    /** The path of the chip the lines belong to. */
    public String chipPath() {
        return chipPath;
    }

    /** The device name errors give: the chip's path and the lines' offsets. */
    String device() {
        return file.path();
    }

    /** The number of lines. */
    public int lineCount() {
        return offsets.length;
    }

    /** The chip offset of request index {@code index}. */
    public int offset(int index) {
        return offsets[index];
    }

    /** The lines' chip offsets, by request index (a copy). */
    public int[] offsets() {
        return offsets.clone();
    }

    /** The request index of chip offset {@code offset}, or -1 if the line is not in this request. */
    public int indexOf(int offset) {
        for (int i = 0; i < offsets.length; i++) {
            if (offsets[i] == offset) {
                return i;
            }
        }
        return -1;
    }

    /** The mask of every line ({@code lineCount()} low bits set). */
    public long allLinesMask() {
        return allMask;
    }

    /** The lines' current settings, by index, as requested or last reconfigured. */
    public List<GpioLineSettings> settings() {
        file.lock().lock();
        try {
            return List.of(settings.clone());
        } finally {
            file.lock().unlock();
        }
    }

    private int index(String operation, int offset) {
        int i = indexOf(offset);
        if (i < 0) {
            throw new IllegalArgumentException(operation + " on " + device() + ": offset " + offset
                    + " is not a line of this request");
        }
        return i;
    }

    private void checkMask(String operation, long mask) {
        if (mask == 0 || (mask & ~allMask) != 0) {
            throw new IllegalArgumentException(operation + " on " + device() + ": mask 0x" + Long.toHexString(mask)
                    + (mask == 0 ? " selects no line" : " selects lines beyond the request's " + offsets.length));
        }
    }

    /** The caller holds the file lock. */
    private long getValuesLocked(long mask) {
        int fd = file.fd("GPIO get values"); // EBADF once closed, before the scratch memory is touched
        values.set(JAVA_LONG, GpioUapi.VALUES_BITS, 0L);
        values.set(JAVA_LONG, GpioUapi.VALUES_MASK, mask);
        valuesIoctl(fd, "GPIO get values", GpioUapi.V2_LINE_GET_VALUES);
        return values.get(JAVA_LONG, GpioUapi.VALUES_BITS) & mask;
    }

    /**
     * GET_VALUES or SET_VALUES on {@link #values}, allocating nothing whatever compiles the
     * caller: the ioctl without errno capture (see {@link Native#ioctlNoErrno}), and only if
     * it fails, once more with the capture for the errno (both ioctls change nothing when
     * they fail and are idempotent when they succeed). The caller holds the file lock.
     */
    private void valuesIoctl(int fd, String operation, long request) {
        if (Native.ioctlNoErrno(fd, request, values) < 0) {
            file.ioctl(operation, request, values);
        }
    }

    /**
     * The logical values of the lines selected by {@code mask} (bit i = request index i),
     * with one {@code GPIO_V2_LINE_GET_VALUES_IOCTL}: bit i holds line i's value, bits
     * outside the mask are 0. Allocates nothing.
     */
    public long getValues(long mask) {
        checkMask("GPIO get values", mask);
        file.lock().lock();
        try {
            return getValuesLocked(mask);
        } finally {
            file.lock().unlock();
        }
    }

    /** The logical values of all lines (bit i = request index i). */
    public long getValues() {
        return getValues(allMask);
    }

    /**
     * Drives the output lines selected by {@code mask} to the logical values of
     * {@code bits} (bit i = request index i), all with one
     * {@code GPIO_V2_LINE_SET_VALUES_IOCTL}. Allocates nothing.
     *
     * @throws HwException {@code EPERM} if a selected line is not an output
     */
    public void setValues(long mask, long bits) {
        checkMask("GPIO set values", mask);
        file.lock().lock();
        try {
            int fd = file.fd("GPIO set values");
            values.set(JAVA_LONG, GpioUapi.VALUES_BITS, bits & mask);
            values.set(JAVA_LONG, GpioUapi.VALUES_MASK, mask);
            valuesIoctl(fd, "GPIO set values", GpioUapi.V2_LINE_SET_VALUES);
        } finally {
            file.lock().unlock();
        }
    }

    /** The logical value of the line at chip offset {@code offset}. Allocates nothing. */
    public boolean getValue(int offset) {
        int i = index("GPIO get value", offset);
        return getValues(1L << i) != 0;
    }

    /** Drives the line at chip offset {@code offset} to logical {@code value}. Allocates nothing. */
    public void setValue(int offset, boolean value) {
        int i = index("GPIO set value", offset);
        long bit = 1L << i;
        setValues(bit, value ? bit : 0);
    }

    /**
     * Changes the settings of all lines with one {@code GPIO_V2_LINE_SET_CONFIG_IOCTL},
     * without releasing them; lines that are outputs afterwards are driven to their
     * settings' output value by the same ioctl.
     *
     * @param byIndex exactly {@link #lineCount()} settings, by request index
     */
    public void reconfigure(List<GpioLineSettings> byIndex) {
        if (byIndex.size() != offsets.length) {
            throw new IllegalArgumentException("GPIO reconfigure on " + device() + ": " + byIndex.size()
                    + " settings for " + offsets.length + " lines");
        }
        GpioLineSettings[] s = byIndex.toArray(GpioLineSettings[]::new);
        MemorySegment encoded = GpioRequestConfig.encode(s);
        file.lock().lock();
        try {
            apply(encoded, s);
        } finally {
            file.lock().unlock();
        }
    }

    /**
     * Changes the settings of the line at chip offset {@code offset} only. The other
     * lines keep their settings, and those that are outputs keep their current level:
     * it is read (one GET_VALUES) and passed as their output value in the same
     * {@code GPIO_V2_LINE_SET_CONFIG_IOCTL}.
     */
    public void reconfigure(int offset, GpioLineSettings lineSettings) {
        int idx = index("GPIO reconfigure", offset);
        file.lock().lock();
        try {
            file.fd("GPIO reconfigure");
            GpioLineSettings[] s = settings.clone();
            s[idx] = lineSettings;
            long outputs = 0;
            for (int i = 0; i < s.length; i++) {
                if (i != idx && s[i].direction() == GpioLineSettings.Direction.OUTPUT) {
                    outputs |= 1L << i;
                }
            }
            if (outputs != 0) {
                long levels = getValuesLocked(outputs);
                for (int i = 0; i < s.length; i++) {
                    if ((outputs & (1L << i)) != 0) {
                        s[i] = s[i].toBuilder().outputValue((levels & (1L << i)) != 0).build();
                    }
                }
            }
            apply(GpioRequestConfig.encode(s), s);
        } finally {
            file.lock().unlock();
        }
    }

    /** The caller holds the file lock. */
    private void apply(MemorySegment encoded, GpioLineSettings[] s) {
        file.fd("GPIO reconfigure");
        MemorySegment.copy(encoded, 0, config, 0, config.byteSize());
        file.ioctl("GPIO reconfigure", GpioUapi.V2_LINE_SET_CONFIG, config);
        System.arraycopy(s, 0, settings, 0, s.length);
    }

    /**
     * Reads the queued edge events, up to {@code buffer.capacity()}, with one
     * {@code read(2)} straight into {@code buffer}, waiting up to {@code timeout} for the
     * first: the number read (also {@code buffer.size()}), 0 if none came in time.
     * Events of all lines arrive in the kernel's order; a gap in {@code seqno} means the
     * kernel's buffer overflowed. Allocates nothing.
     *
     * <p>Threads: one reader at a time; other calls go on while it waits. A non-zero
     * timeout is refused on a virtual thread ({@link IllegalStateException}), since the
     * wait blocks in {@code poll(2)}: use a {@link GpioEventPoller} there. Refused too
     * ({@link IllegalStateException}) while a poller listens to this request (the events
     * go to its listeners).
     *
     * @throws HwException {@code ENODEV} (the chip was removed), ...
     */
    public int readEvents(GpioEventBuffer buffer, Duration timeout) {
        String op = "GPIO edge event read";
        GpioWaiter.refuseVirtualBlocking(op, timeout);
        long deadline = GpioWaiter.deadline(timeout);
        waiter.readerLock().lock();
        try {
            buffer.size(0);
            for (;;) {
                if (attachment != null) {
                    throw new IllegalStateException(op + " on " + device() + ": a GpioEventPoller reads this"
                            + " request's events");
                }
                int n = readOnce(op, buffer.segment(), buffer.capacity());
                if (n > 0) {
                    eventsRead = true;
                    buffer.size(n);
                    return n;
                }
                if (!waiter.await(op, deadline)) {
                    return 0;
                }
            }
        } finally {
            waiter.readerLock().unlock();
        }
    }

    /**
     * One non-blocking read of up to {@code max} events into {@code into}: the number
     * read, 0 if none is queued (EAGAIN), -1 if the request was closed; throws on
     * failure. Used by {@link #readEvents} and the poller.
     */
    int readOnce(String operation, MemorySegment into, int max) {
        long r;
        file.lock().lock();
        try {
            if (file.rawFd() < 0) {
                return -1;
            }
            r = file.read(operation, into, max * GpioUapi.EVENT_SIZE);
        } finally {
            file.lock().unlock();
        }
        if (r > 0 && r % GpioUapi.EVENT_SIZE == 0) {
            return (int) (r / GpioUapi.EVENT_SIZE);
        }
        if (r == -Native.EAGAIN) {
            return 0;
        }
        if (r < 0) {
            throw new HwException(operation, device(), (int) -r);
        }
        throw new HwException(operation, device(), GpioUapi.EIO, r == 0 ? "end of file"
                : "read " + r + " bytes, not a whole number of " + GpioUapi.EVENT_SIZE + "-byte events");
    }

    /** The descriptor (for the poller's epoll set), or throws EBADF once closed. */
    int fd(String operation) {
        file.lock().lock();
        try {
            return file.fd(operation);
        } finally {
            file.lock().unlock();
        }
    }

    ReentrantLock stateLock() {
        return stateLock;
    }

    /** The poller attachment; the caller holds {@link #stateLock()}. */
    GpioEventPoller.Attachment attachment() {
        return attachment;
    }

    /** Sets the poller attachment; the caller holds {@link #stateLock()}. */
    void attachment(GpioEventPoller.Attachment a) {
        attachment = a;
    }

    /** Whether {@link #readEvents} ever read an event. */
    boolean eventsRead() {
        return eventsRead;
    }

    /** Whether {@link #close()} ran; the caller holds {@link #stateLock()}. */
    boolean closedLocked() {
        return closed;
    }

    /**
     * Releases the lines and closes the descriptor; idempotent. A poller listening to the
     * request stops first (its descriptor leaves the epoll set; events already read are
     * still delivered). Waits for a running {@link #readEvents} (at most its timeout).
     */
    @Override
    public void close() {
        stateLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            GpioEventPoller.Attachment a = attachment;
            if (a != null) {
                a.detach();
            }
        } finally {
            stateLock.unlock();
        }
        waiter.readerLock().lock();
        try {
            file.close();
        } finally {
            waiter.readerLock().unlock();
        }
    }

    @Override
    public String toString() {
        return "GpioRequest[" + device() + "]";
    }
}
