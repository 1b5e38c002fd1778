package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

import io.parambus.internal.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Delivers the edge events of any number of requests to listeners: one platform thread
 * waits in {@code epoll_wait(2)} on every listened-to request's descriptor (and on an
 * {@code eventfd} that wakes it to resume or stop), reads each request's events in
 * batches of up to 64 into one native buffer it owns, and hands them to the listeners on
 * an {@link Executor} of the user's choice.
 *
 * <pre>{@code
 * try (GpioEventPoller poller = GpioEventPoller.start();      // listeners on virtual threads
 *      GpioRequest buttons = chip.request(GpioRequestConfig.builder()
 *              .lines(GpioLineSettings.input().edge(GpioLineSettings.Edge.BOTH).build(), 0, 1, 2, 3, 4, 5, 6, 7)
 *              .build())) {
 *     poller.listen(buttons, e -> System.out.println(e.offset() + " " + e.type() + " at " + e.timestampNs()));
 *     ...
 * }
 * }</pre>
 *
 * <p>Threads: the poller thread is the only one that waits in a native call; it never runs
 * a listener itself (unless the executor runs tasks in the calling thread), so no virtual
 * thread is ever blocked in a native call. Each registration ({@link #listen}) has its
 * own bounded queue, drained by one task at a time on the executor: a listener sees its
 * events one at a time, in the kernel's order; different registrations run in parallel.
 * The default executor starts a virtual thread per drain (owned and shut down by the
 * poller); any executor can be given (a platform pool, a single thread, ...), the caller
 * keeps owning it. Every method may be called from any thread, listeners included.
 *
 * <p>No event lost silently: a listener that is slower than its events fills its queue;
 * the poller then stops reading that request (its descriptor leaves the epoll set) until
 * the queue drains, so the events wait in the kernel's buffer (sized by
 * {@link GpioRequestConfig.Builder#eventBufferSize(int)}). Should that overflow, the
 * kernel drops the oldest events; the poller sees the gap in the sequence numbers and
 * reports it: in {@link GpioEdgeEvent#missed()} of the line's next event and in
 * {@link #lostEvents()}.
 *
 * <p>Memory: nothing is kept per event. The events are read into the poller's one native
 * buffer (allocated at start); each is decoded into a small immutable
 * {@link GpioEdgeEvent}, shared by the registrations it goes to and garbage once they
 * are done with it; the queues are fixed-size arrays.
 *
 * <p>Errors: an exception a listener throws goes to the uncaught-exception handler
 * ({@link Builder#uncaughtExceptionHandler}, by default that of the thread that ran the
 * listener, which prints it) and the next event is delivered as usual. A failed read of a
 * request (e.g. {@code ENODEV}: its chip was removed) goes to its listeners'
 * {@link GpioEdgeListener#onError}, after the events read before it; the request then
 * leaves the poller, which goes on serving the others.
 *
 * <p>Shutdown: {@link #close()} stops and joins the poller thread, closes the epoll and
 * event descriptors and the native memory, lets the listeners finish the events already
 * read, and shuts down the default executor. Closing a request removes its descriptor
 * from the epoll set first.
 */
public final class GpioEventPoller implements AutoCloseable {
    /** Events read per {@code read(2)} of a request at most. */
    static final int BATCH = 64;
    private static final int MAX_EPOLL_EVENTS = 64;
    private static final long WAKE_KEY = -1L;
    private static final AtomicInteger NUMBER = new AtomicInteger();
    /** Set while a drain task runs listeners (close() does not wait for the drain it is called from). */
    private static final ThreadLocal<GpioEventPoller> DRAINING = new ThreadLocal<>();

    private final Executor executor;
    private final ExecutorService ownedExecutor;
    private final Thread.UncaughtExceptionHandler handler;
    private final int queueCapacity;
    private final Arena arena = Arena.ofShared();
    private final int epfd, eventfd;
    // The poller thread's own memory.
    private final MemorySegment epollEvents, readBuffer, drainBuffer, pollerCapture;
    // epoll_ctl from any thread, under the registry lock.
    private final MemorySegment ctlEvent, ctlCapture;
    // eventfd writes from any thread, under wakeLock.
    private final MemorySegment wakeValue, wakeCapture;
    private final ReentrantLock wakeLock = new ReentrantLock();

    private final ReentrantLock registry = new ReentrantLock();
    /** Attachments by slot; copy-on-write under the registry lock, read by the poller thread. */
    private volatile Attachment[] slots = new Attachment[0];
    private int generation;

    private final AtomicBoolean resumeWanted = new AtomicBoolean();
    private final AtomicLong lost = new AtomicLong();
    private final AtomicLong eventCount = new AtomicLong();
    private final ReentrantLock drainLock = new ReentrantLock();
    private final Condition drainsIdle = drainLock.newCondition();
    private int activeDrains;

    private final Thread thread;
    private volatile boolean stopping;
    /** The descriptors and native memory are gone; guarded by the registry and wake locks. */
    private boolean released;
    /** close() ran on the poller thread itself (a listener run in place): it releases on its way out. */
    private volatile boolean releaseOnExit;
    private final AtomicBoolean closed = new AtomicBoolean();

    private GpioEventPoller(Builder b) {
        this.ownedExecutor = b.executor == null
                ? Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("gpio-listener-", 0).factory())
                : null;
        this.executor = b.executor == null ? ownedExecutor : b.executor;
        this.handler = b.handler;
        this.queueCapacity = b.queueCapacity;
        int ep = -1, ev = -1;
        try {
            MemorySegment capture = arena.allocate(Native.captureLayout());
            ep = Native.epollCreate(Native.EPOLL_CLOEXEC, capture);
            if (ep < 0) {
                throw new HwException("GPIO poller epoll_create1", "epoll", -ep);
            }
            ev = Native.eventfd(0, Native.EFD_CLOEXEC | Native.EFD_NONBLOCK, capture);
            if (ev < 0) {
                throw new HwException("GPIO poller eventfd", "eventfd", -ev);
            }
            this.epollEvents = arena.allocate(Native.EPOLL_EVENT_SIZE * MAX_EPOLL_EVENTS, 8);
            this.readBuffer = arena.allocate(GpioUapi.LINE_EVENT, BATCH);
            this.drainBuffer = arena.allocate(JAVA_LONG);
            this.pollerCapture = capture;
            this.ctlEvent = arena.allocate(Native.EPOLL_EVENT_SIZE, 8);
            this.ctlCapture = arena.allocate(Native.captureLayout());
            this.wakeValue = arena.allocate(JAVA_LONG);
            this.wakeValue.set(JAVA_LONG, 0, 1L);
            this.wakeCapture = arena.allocate(Native.captureLayout());
            this.epfd = ep;
            this.eventfd = ev;
            int r = ctl(Native.EPOLL_CTL_ADD, eventfd, Native.EPOLLIN, WAKE_KEY);
            if (r < 0) {
                throw new HwException("GPIO poller epoll_ctl", "eventfd", -r);
            }
        } catch (RuntimeException | Error e) {
            if (ep >= 0) {
                Native.close(ep);
            }
            if (ev >= 0) {
                Native.close(ev);
            }
            arena.close();
            if (ownedExecutor != null) {
                ownedExecutor.shutdown();
            }
            throw e;
        }
        this.thread = Thread.ofPlatform().daemon(true).name(b.name != null ? b.name
                : "gpio-poller-" + NUMBER.incrementAndGet()).unstarted(this::run);
        thread.start();
    }

    /** A poller with the defaults: listeners on virtual threads, queues of 1024 events. */
    public static GpioEventPoller start() {
        return builder().start();
    }

    /** A builder of a poller. */
    public static Builder builder() {
        return new Builder();
    }

    /** Options of a poller. Not thread-safe; reusable. */
    public static final class Builder {
        private Executor executor;
        private Thread.UncaughtExceptionHandler handler;
        private int queueCapacity = 1024;
        private String name;

        private Builder() {
        }

        /**
         * The executor that runs the listeners (one task per registration at a time; the
         * caller keeps owning it). Default: a virtual thread per task, owned by the poller.
         */
        public Builder executor(Executor value) {
            this.executor = Objects.requireNonNull(value, "executor");
            return this;
        }

        /**
         * Where exceptions thrown by listeners go. Default: the uncaught-exception handler
         * of the thread that ran the listener (which prints the stack trace).
         */
        public Builder uncaughtExceptionHandler(Thread.UncaughtExceptionHandler value) {
            this.handler = Objects.requireNonNull(value, "handler");
            return this;
        }

        /** Events a registration's queue holds (at least 64, the batch size; default 1024). */
        public Builder queueCapacity(int events) {
            if (events < BATCH || events > 1 << 20) {
                throw new IllegalArgumentException("GPIO poller: queue capacity " + events + " is outside " + BATCH
                        + ".." + (1 << 20));
            }
            this.queueCapacity = events;
            return this;
        }

        /** The poller thread's name (default {@code gpio-poller-N}). */
        public Builder threadName(String value) {
            this.name = Objects.requireNonNull(value, "name");
            return this;
        }

        /** Starts the poller thread. */
        public GpioEventPoller start() {
            return new GpioEventPoller(this);
        }
    }

    /**
     * Sends the events of every line of {@code request} to {@code listener}, until the
     * registration, the request or the poller is closed.
     *
     * @throws IllegalStateException the request is listened to by another poller, or this
     *                               poller is closed
     * @throws HwException           {@code EBADF} if the request is closed
     */
    public Registration listen(GpioRequest request, GpioEdgeListener listener) {
        return listen(request, -1, listener);
    }

    /**
     * Sends the events of the line at chip offset {@code offset} of {@code request} to
     * {@code listener}; as {@link #listen(GpioRequest, GpioEdgeListener)}. A line may
     * have any number of listeners.
     */
    public Registration listen(GpioRequest request, int offset, GpioEdgeListener listener) {
        Objects.requireNonNull(listener, "listener");
        String op = "GPIO poller listen";
        if (offset != -1 && request.indexOf(offset) < 0) {
            throw new IllegalArgumentException(op + " on " + request.device() + ": offset " + offset
                    + " is not a line of this request");
        }
        request.stateLock().lock();
        try {
            int fd = request.fd(op); // EBADF once closed
            Attachment a = request.attachment();
            if (a != null && a.poller() != this) {
                throw new IllegalStateException(op + " on " + request.device() + ": another GpioEventPoller listens"
                        + " to this request");
            }
            registry.lock();
            try {
                if (stopping) {
                    throw new IllegalStateException(op + " on " + request.device() + ": the poller is closed");
                }
                if (a == null) {
                    a = attachLocked(request, fd);
                    request.attachment(a);
                }
                Registration reg = new Registration(a, offset, listener);
                Registration[] regs = Arrays.copyOf(a.regs, a.regs.length + 1);
                regs[regs.length - 1] = reg;
                a.regs = regs;
                return reg;
            } finally {
                registry.unlock();
            }
        } finally {
            request.stateLock().unlock();
        }
    }

    /** Events the kernel dropped (buffer overflow) among the requests this poller read, by their seqno gaps. */
    public long lostEvents() {
        return lost.get();
    }

    /** Events read so far, over all requests. */
    public long eventCount() {
        return eventCount.get();
    }

    /** The poller thread (for diagnostics: its name, whether it is alive). */
    public Thread thread() {
        return thread;
    }

    // ---- attachments (one per listened-to request) ------------------------

    /** A request in this poller's epoll set, with its registrations. */
    final class Attachment {
        final GpioRequest request;
        final int fd;
        final int slot;
        final long key;
        volatile Registration[] regs = new Registration[0];
        /** Out of the epoll set while a queue is full; set by the poller thread, under the registry lock. */
        volatile boolean paused;
        /** Guarded by the registry lock. */
        boolean detached;
        // The poller thread's own: the last sequence numbers seen (-1: none yet and unknown).
        long lastSeqno;
        final long[] lastLineSeqno;

        Attachment(GpioRequest request, int fd, int slot, long key) {
            this.request = request;
            this.fd = fd;
            this.slot = slot;
            this.key = key;
            // Events nobody read yet start at seqno 1: a gap from there is a loss too.
            long start = request.eventsRead() ? -1 : 0;
            this.lastSeqno = start;
            this.lastLineSeqno = new long[request.lineCount()];
            Arrays.fill(lastLineSeqno, start);
        }

        GpioEventPoller poller() {
            return GpioEventPoller.this;
        }

        /** Removes the request from the poller (the request's close; its state lock is held). */
        void detach() {
            registry.lock();
            try {
                detachLocked(this);
            } finally {
                registry.unlock();
            }
        }
    }

    /** The caller holds the registry lock. */
    private Attachment attachLocked(GpioRequest request, int fd) {
        Attachment[] s = slots;
        int slot = 0;
        while (slot < s.length && s[slot] != null) {
            slot++;
        }
        generation++;
        Attachment a = new Attachment(request, fd, slot, ((long) generation << 32) | slot);
        int r = ctl(Native.EPOLL_CTL_ADD, fd, Native.EPOLLIN, a.key);
        if (r < 0) {
            throw new HwException("GPIO poller epoll_ctl add", request.device(), -r);
        }
        Attachment[] n = Arrays.copyOf(s, Math.max(s.length, slot + 1));
        n[slot] = a;
        slots = n;
        return a;
    }

    /** The caller holds the registry lock. */
    private void detachLocked(Attachment a) {
        if (a.detached) {
            return;
        }
        a.detached = true;
        if (!a.paused && !released) {
            int r = ctl(Native.EPOLL_CTL_DEL, a.fd, 0, 0);
            if (r < 0 && r != -GpioUapi.ENOENT) {
                report(new HwException("GPIO poller epoll_ctl del", a.request.device(), -r));
            }
        }
        Attachment[] n = slots.clone();
        n[a.slot] = null;
        slots = n;
    }

    /** Detaches a whole request (its read failed, or the poller closes): takes its state lock, then the registry. */
    private void detachRequest(Attachment a) {
        a.request.stateLock().lock();
        try {
            registry.lock();
            try {
                detachLocked(a);
                if (a.request.attachment() == a) {
                    a.request.attachment(null);
                }
            } finally {
                registry.unlock();
            }
        } finally {
            a.request.stateLock().unlock();
        }
    }

    /** epoll_ctl on the poller's set; the caller holds the registry lock (or is the constructor). */
    private int ctl(int op, int fd, int events, long key) {
        ctlEvent.set(JAVA_INT_UNALIGNED, 0, events);
        ctlEvent.set(JAVA_LONG_UNALIGNED, Native.EPOLL_EVENT_DATA, key);
        return Native.epollCtl(epfd, op, fd, op == Native.EPOLL_CTL_DEL ? MemorySegment.NULL : ctlEvent, ctlCapture);
    }

    private void wake() {
        wakeLock.lock();
        try {
            if (released) {
                return;
            }
            long r = Native.write(eventfd, wakeValue, 8, wakeCapture);
            // EAGAIN: the counter is saturated, so the poller is woken anyway.
            if (r < 0 && r != -Native.EAGAIN) {
                report(new HwException("GPIO poller wake", "eventfd", (int) -r));
            }
        } finally {
            wakeLock.unlock();
        }
    }

    // ---- the poller thread ------------------------------------------------

    private void run() {
        try {
            while (!stopping) {
                int n = Native.epollWait(epfd, epollEvents, MAX_EPOLL_EVENTS, -1, pollerCapture);
                if (n == -Native.EINTR) {
                    continue;
                }
                if (n < 0) {
                    HwException e = new HwException("GPIO poller epoll_wait", "epoll", -n);
                    for (Attachment a : slots) {
                        if (a != null) {
                            fail(a, e);
                        }
                    }
                    report(e);
                    return;
                }
                for (int i = 0; i < n && !stopping; i++) {
                    long key = epollEvents.get(JAVA_LONG_UNALIGNED, i * Native.EPOLL_EVENT_SIZE + Native.EPOLL_EVENT_DATA);
                    if (key == WAKE_KEY) {
                        Native.read(eventfd, drainBuffer, 8, pollerCapture);
                        if (!stopping) {
                            resumeReady();
                        }
                        continue;
                    }
                    Attachment[] s = slots;
                    int slot = (int) key;
                    Attachment a = slot < s.length ? s[slot] : null;
                    if (a != null && a.key == key) {
                        service(a);
                    }
                }
            }
        } catch (Throwable t) {
            report(t);
        } finally {
            if (releaseOnExit) {
                release();
            }
        }
    }

    /**
     * Closes the descriptors and frees the native memory, once the poller thread is done
     * (or is the caller, leaving): under the registry and wake locks, the only other users
     * of that memory, which check {@code released} first.
     */
    private void release() {
        registry.lock();
        wakeLock.lock();
        try {
            if (!released) {
                released = true;
                Native.close(epfd);
                Native.close(eventfd);
                arena.close();
            }
        } finally {
            wakeLock.unlock();
            registry.unlock();
        }
    }

    /** Free room in the fullest queue of a's registrations (BATCH if it has none). */
    private static int room(Attachment a) {
        int room = BATCH;
        for (Registration r : a.regs) {
            if (!r.closed) {
                room = Math.min(room, r.queue.remainingCapacity());
            }
        }
        return room;
    }

    /** Reads a batch of a's events and hands them to its registrations. */
    private void service(Attachment a) {
        int room = room(a);
        if (room == 0) {
            pause(a);
            return;
        }
        String op = "GPIO edge event read";
        int n;
        try {
            n = a.request.readOnce(op, readBuffer, room);
        } catch (HwException e) {
            fail(a, e);
            return;
        }
        if (n <= 0) {
            return; // nothing queued after all, or the request is being closed
        }
        eventCount.addAndGet(n);
        Registration[] regs = a.regs;
        for (int k = 0; k < n; k++) {
            long base = k * GpioUapi.EVENT_SIZE;
            long ts = readBuffer.get(JAVA_LONG, base + GpioUapi.EVENT_TIMESTAMP);
            int id = readBuffer.get(JAVA_INT, base + GpioUapi.EVENT_ID);
            int offset = readBuffer.get(JAVA_INT, base + GpioUapi.EVENT_OFFSET);
            long seqno = Integer.toUnsignedLong(readBuffer.get(JAVA_INT, base + GpioUapi.EVENT_SEQNO));
            long lineSeqno = Integer.toUnsignedLong(readBuffer.get(JAVA_INT, base + GpioUapi.EVENT_LINE_SEQNO));
            GpioEdgeEvent.Type type = GpioEdgeEvent.Type.of(id);
            int index = a.request.indexOf(offset);
            if (type == null || index < 0) {
                fail(a, new HwException(op, a.request.device(), GpioUapi.EIO, type == null
                        ? "event id " + id + " is not one the kernel defines" : "event of line " + offset
                        + ", which is not in the request"));
                break;
            }
            if (a.lastSeqno >= 0) {
                long gap = (seqno - a.lastSeqno - 1) & 0xFFFF_FFFFL;
                if (gap != 0 && gap < 0x8000_0000L) {
                    lost.addAndGet(gap);
                }
            }
            a.lastSeqno = seqno;
            long missed = 0;
            long last = a.lastLineSeqno[index];
            if (last >= 0) {
                long gap = (lineSeqno - last - 1) & 0xFFFF_FFFFL;
                missed = gap < 0x8000_0000L ? gap : 0;
            }
            a.lastLineSeqno[index] = lineSeqno;
            GpioEdgeEvent e = new GpioEdgeEvent(ts, type, offset, seqno, lineSeqno, missed);
            for (Registration r : regs) {
                if (!r.closed && (r.offset < 0 || r.offset == offset) && !r.queue.offer(e)) {
                    lost.incrementAndGet(); // cannot happen: room was checked before the read
                }
            }
        }
        for (Registration r : regs) {
            if (!r.queue.isEmpty()) {
                schedule(r);
            }
        }
    }

    /** Takes a out of the epoll set while a queue of it is full (the poller thread). */
    private void pause(Attachment a) {
        registry.lock();
        try {
            if (a.detached || a.paused || released) {
                return;
            }
            int r = ctl(Native.EPOLL_CTL_DEL, a.fd, 0, 0);
            if (r < 0) {
                throw new HwException("GPIO poller epoll_ctl del", a.request.device(), -r);
            }
            a.paused = true;
        } finally {
            registry.unlock();
        }
        // A drain that freed room before it could see 'paused' did not wake us: look again.
        if (room(a) > 0) {
            resume(a);
        }
    }

    private void resume(Attachment a) {
        registry.lock();
        try {
            if (a.detached || !a.paused || released) {
                return;
            }
            int r = ctl(Native.EPOLL_CTL_ADD, a.fd, Native.EPOLLIN, a.key);
            if (r < 0) {
                throw new HwException("GPIO poller epoll_ctl add", a.request.device(), -r);
            }
            a.paused = false;
        } finally {
            registry.unlock();
        }
    }

    /** Resumes every paused attachment whose queues have room again (the poller thread, after a wake). */
    private void resumeReady() {
        resumeWanted.set(false);
        for (Attachment a : slots) {
            if (a != null && a.paused && room(a) > 0) {
                resume(a);
            }
        }
    }

    /** a's read failed: its registrations get e after their queued events, and it leaves the poller. */
    private void fail(Attachment a, HwException e) {
        for (Registration r : a.regs) {
            r.error = e;
            schedule(r);
        }
        detachRequest(a);
    }

    // ---- delivery ---------------------------------------------------------

    private void schedule(Registration r) {
        if (r.scheduled.compareAndSet(false, true)) {
            drainLock.lock();
            try {
                activeDrains++;
            } finally {
                drainLock.unlock();
            }
            try {
                executor.execute(r.drainTask);
            } catch (RejectedExecutionException e) {
                r.scheduled.set(false);
                drainDone();
                report(e);
            }
        }
    }

    private void drainDone() {
        drainLock.lock();
        try {
            if (--activeDrains == 0) {
                drainsIdle.signalAll();
            }
        } finally {
            drainLock.unlock();
        }
    }

    private void report(Throwable t) {
        Thread current = Thread.currentThread();
        try {
            (handler != null ? handler : current.getUncaughtExceptionHandler()).uncaughtException(current, t);
        } catch (Throwable again) {
            current.getThreadGroup().uncaughtException(current, again);
        }
    }

    /**
     * One listener's subscription: its queue and its place in the poller. Closing it
     * stops its deliveries (events still queued for it are dropped); when a request's last
     * registration is closed, the request leaves the poller's epoll set.
     */
    public final class Registration implements AutoCloseable {
        private final Attachment attachment;
        private final int offset;
        private final GpioEdgeListener listener;
        private final ArrayBlockingQueue<GpioEdgeEvent> queue = new ArrayBlockingQueue<>(queueCapacity);
        private final AtomicBoolean scheduled = new AtomicBoolean();
        private final Runnable drainTask = this::drain;
        private volatile HwException error;
        private boolean errorDelivered; // the drain task's own (one at a time)
        private volatile boolean closed;

        private Registration(Attachment attachment, int offset, GpioEdgeListener listener) {
            this.attachment = attachment;
            this.offset = offset;
            this.listener = listener;
        }

        /** The request listened to. */
        public GpioRequest request() {
            return attachment.request;
        }

        /** The chip offset of the line listened to, or -1 for all lines of the request. */
        public int offset() {
            return offset;
        }

        /** Events queued for the listener, not yet delivered. */
        public int pending() {
            return queue.size();
        }

        private void drain() {
            GpioEventPoller outer = DRAINING.get();
            DRAINING.set(GpioEventPoller.this);
            try {
                for (;;) {
                    GpioEdgeEvent e;
                    while (!closed && (e = queue.poll()) != null) {
                        try {
                            listener.onEdge(e);
                        } catch (Throwable t) {
                            report(t);
                        }
                        if (attachment.paused && resumeWanted.compareAndSet(false, true)) {
                            wake();
                        }
                    }
                    if (closed) {
                        queue.clear();
                    }
                    HwException err = error;
                    if (err != null && !errorDelivered && !closed) {
                        errorDelivered = true;
                        try {
                            listener.onError(err);
                        } catch (Throwable t) {
                            report(t);
                        }
                    }
                    scheduled.set(false);
                    boolean more = !closed && (!queue.isEmpty() || (error != null && !errorDelivered));
                    if (!more || !scheduled.compareAndSet(false, true)) {
                        break;
                    }
                }
            } finally {
                if (outer == null) {
                    DRAINING.remove();
                } else {
                    DRAINING.set(outer);
                }
                drainDone();
            }
        }

        /** Stops this listener's deliveries; idempotent. */
        @Override
        public void close() {
            GpioRequest request = attachment.request;
            request.stateLock().lock();
            try {
                registry.lock();
                try {
                    if (closed) {
                        return;
                    }
                    closed = true;
                    Registration[] regs = attachment.regs;
                    Registration[] n = new Registration[regs.length - 1];
                    int k = 0;
                    for (Registration r : regs) {
                        if (r != this) {
                            n[k++] = r;
                        }
                    }
                    attachment.regs = n;
                    if (n.length == 0) {
                        detachLocked(attachment);
                        if (request.attachment() == attachment) {
                            request.attachment(null);
                        }
                    }
                } finally {
                    registry.unlock();
                }
            } finally {
                request.stateLock().unlock();
            }
            // Its queue may have room now: a paused request can go on for the others.
            if (attachment.paused && resumeWanted.compareAndSet(false, true) && !stopping) {
                wake();
            }
        }
    }

    /**
     * Stops the poller thread and waits for it, removes every request from it (they stay
     * open), closes its descriptors and native memory, waits for the listeners to finish
     * the events already read (not when called from a listener), and shuts down the
     * default executor; idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        registry.lock();
        try {
            stopping = true;
        } finally {
            registry.unlock();
        }
        boolean fromPoller = Thread.currentThread() == thread;
        if (fromPoller) {
            releaseOnExit = true;
        } else {
            wake();
            boolean interrupted = false;
            for (;;) {
                try {
                    thread.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        for (Attachment a : slots) {
            if (a != null) {
                detachRequest(a);
            }
        }
        boolean inListener = DRAINING.get() == this;
        if (!inListener) {
            drainLock.lock();
            try {
                while (activeDrains > 0) {
                    drainsIdle.awaitUninterruptibly();
                }
            } finally {
                drainLock.unlock();
            }
        }
        if (ownedExecutor != null) {
            ownedExecutor.shutdown();
            if (!inListener) {
                try {
                    while (!ownedExecutor.awaitTermination(1, TimeUnit.MINUTES)) {
                        // the drains are done: only the threads' exits remain
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        if (!fromPoller) {
            release();
        }
    }

    @Override
    public String toString() {
        return "GpioEventPoller[" + thread.getName() + ", " + eventCount.get() + " events, " + lost.get() + " lost]";
    }
}
