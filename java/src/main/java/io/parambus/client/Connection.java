package io.parambus.client;

import io.parambus.ParambusException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One connection to pbusd's socket: a client has one at a time and makes a new one after
 * a loss. Requests are pipelined: any number of threads may send, each then waits for
 * its own reply, and replies come in the order of the requests (socket-protocol.md §3),
 * so a FIFO of what was sent ({@link Pending}) says what each reply answers.
 *
 * <p><b>Who reads.</b> One thread at a time holds the <em>reader role</em> and reads the
 * socket for everybody: it decodes each reply into its request's {@link Pending} and
 * unparks that request's waiter, and hands notifications to their subscriptions. A
 * thread that waits for a reply takes the role if nobody holds it (so a lone caller
 * sends, reads its own reply and returns: one write, one wait, one read, no other thread
 * involved); otherwise it parks until its reply is decoded for it or the role is free
 * again — whoever gives up the role wakes the next waiter in FIFO order. The client's
 * dispatcher thread, while it runs (subscriptions or connection listeners exist), takes
 * the role whenever no caller holds it and waits in {@code select} for notifications.
 *
 * <p><b>Blocking.</b> The channel is non-blocking; the reader waits for input in a
 * {@link Selector} with the request's deadline, and a writer whose frame does not fit the
 * socket waits in a second one. Locks are {@link ReentrantLock}s and waits are
 * {@link LockSupport#parkNanos}, never monitors, so a virtual thread that waits here
 * unmounts from its carrier (on JDK 24 and later the JDK's selector parks virtual threads
 * through its poller too). No lock of the client is held while the socket is used, and
 * the reader never writes (a reader blocked on writing could deadlock with a server
 * waiting for it to read).
 *
 * <p><b>Ending.</b> {@link #kill} ends the connection from any thread, once: it closes
 * the channel, fails every request still waiting with the cause and tells the client.
 */
final class Connection {
    private static final int INPUT_MIN = 64 * 1024;

    final PbusClient client;
    final Path path;
    private final SocketChannel channel;
    private final Selector readSelector;
    private Selector writeSelector; // under writeLock

    private final ReentrantLock writeLock = new ReentrantLock();
    private ByteBuffer out = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN); // under writeLock
    private int nextId; // under writeLock

    private final ReentrantLock readerRole = new ReentrantLock();
    private ByteBuffer in = ByteBuffer.allocateDirect(INPUT_MIN).order(ByteOrder.LITTLE_ENDIAN); // under readerRole
    private int inStart; // first unprocessed byte; data up to in.position()
    private boolean drained = true; // the last read emptied the socket: wait before reading again
    private final Wire.Body body = new Wire.Body(in, 0, 0); // under readerRole

    private final ReentrantLock fifoLock = new ReentrantLock();
    private final ArrayDeque<Pending> fifo = new ArrayDeque<>(); // under fifoLock
    private final Map<Integer, Subscription> byServerId = new HashMap<>(); // under fifoLock

    private final AtomicBoolean killed = new AtomicBoolean();
    private volatile boolean dead;
    private volatile ParambusException cause;
    private volatile int maxFrame = Wire.MAX_FRAME_LIMIT;
    private volatile Wire.HelloReply hello;

    /** A connection on {@code channel} (connected, checked, still blocking), made non-blocking here. */
    Connection(PbusClient client, SocketChannel channel, Path path) throws IOException {
        this.client = client;
        this.channel = channel;
        this.path = path;
        channel.configureBlocking(false);
        readSelector = Selector.open();
        try {
            channel.register(readSelector, SelectionKey.OP_READ);
        } catch (IOException | RuntimeException e) {
            readSelector.close();
            throw e;
        }
    }

    /** Whether the connection has ended. */
    boolean isDead() {
        return dead;
    }

    /** Why the connection ended; {@code null} while it lives. */
    ParambusException cause() {
        return cause;
    }

    /** The server's HELLO_REPLY, once the handshake is done. */
    Wire.HelloReply hello() {
        return hello;
    }

    void handshakeDone(Wire.HelloReply h) {
        hello = h;
        maxFrame = Integer.compareUnsigned(h.maxFrame(), Wire.MAX_FRAME_LIMIT) < 0 ? h.maxFrame() : Wire.MAX_FRAME_LIMIT;
    }

    /** The subscription a server id names on this connection, once its SUBSCRIBED was read. */
    void bind(int serverId, Subscription s) {
        fifoLock.lock();
        try {
            byServerId.put(serverId, s);
        } finally {
            fifoLock.unlock();
        }
    }

    /** Forgets a server id (after UNSUBSCRIBED): its NOTIFYs, if any still come, are dropped. */
    void unbind(int serverId) {
        fifoLock.lock();
        try {
            byServerId.remove(serverId);
        } finally {
            fifoLock.unlock();
        }
    }

    // ---- Sending ----------------------------------------------------------------------------------------------

    /** Sends one request; see {@link #sendAll}. */
    void send(Pending p, long deadline) {
        sendAll(List.of(p), deadline);
    }

    /**
     * Sends requests in one write, in order, each with a new id, and puts them in the
     * FIFO. Each that went out whole is marked {@link Pending#sent}.
     *
     * @throws ConnectionException if the connection is (or ends) dead; the requests not
     *         marked sent never reached the server
     * @throws ParambusException {@code EMSGSIZE} if a frame is above the server's max_frame
     * @throws RequestTimeoutException if the socket took no more of a frame until the
     *         deadline (the connection is then ended: half a frame cannot be taken back)
     */
    void sendAll(List<? extends Pending> requests, long deadline) {
        writeLock.lock();
        try {
            if (dead) {
                throw notSent(requests.get(0));
            }
            long total = 0;
            for (Pending p : requests) {
                long n = p.size();
                if (n > maxFrame) {
                    throw new ParambusException("EMSGSIZE", p.operation(this) + ": request of " + n
                            + " bytes above the server's max_frame of " + maxFrame + " (EMSGSIZE)");
                }
                total += n;
            }
            if (out.capacity() < total) {
                out = ByteBuffer.allocateDirect((int) Math.max(total, 2L * out.capacity())).order(ByteOrder.LITTLE_ENDIAN);
            }
            out.clear();
            fifoLock.lock();
            try {
                for (Pending p : requests) {
                    if (++nextId == 0) {
                        nextId = 1;
                    }
                    p.id = nextId;
                    p.encode(out, nextId);
                    fifo.addLast(p);
                }
            } finally {
                fifoLock.unlock();
            }
            out.flip();
            try {
                while (out.hasRemaining()) {
                    if (channel.write(out) == 0) {
                        waitWritable(deadline, requests.get(0));
                    }
                }
            } catch (IOException e) {
                // The peer closed: what it sent before (an ERROR that says why) is
                // worth reading, if nobody else reads.
                if (readerRole.tryLock()) {
                    try {
                        readAvailable();
                    } finally {
                        readerRole.unlock();
                    }
                }
                kill(new ConnectionException("ECONNRESET", "connection to pbusd at " + path + " lost: " + e.getMessage()
                        + " (ECONNRESET)", e));
                throw notSent(requests.get(0));
            }
            for (Pending p : requests) {
                p.sent = true;
            }
        } finally {
            if (dead && writeSelector != null) {
                try {
                    writeSelector.close();
                } catch (IOException e) {
                    // Nothing to lose.
                }
            }
            writeLock.unlock();
        }
    }

    private ConnectionException notSent(Pending p) {
        ParambusException c = cause;
        return new ConnectionException("ENOTCONN", p.operation(this) + ": not sent: " + (c != null ? c.getMessage()
                : "the connection ended") + " (ENOTCONN)", c);
    }

    private void waitWritable(long deadline, Pending p) throws IOException {
        if (writeSelector == null) {
            writeSelector = Selector.open();
            channel.register(writeSelector, SelectionKey.OP_WRITE);
        }
        long left = deadline - System.nanoTime();
        if (left <= 0 || dead) {
            RequestTimeoutException e = new RequestTimeoutException(p.operation(this)
                    + ": the server took no more of the request within the timeout (ETIMEDOUT)");
            kill(e);
            throw e;
        }
        writeSelector.selectedKeys().clear();
        writeSelector.select(Math.max(1, left / 1_000_000));
    }

    // ---- Waiting and reading ---------------------------------------------------------------------------------------

    /**
     * Waits until {@code p} is done (its reply decoded, or the connection ended), reading
     * the socket while nobody else does.
     *
     * @throws RequestTimeoutException if the deadline passes first ({@code p} is then abandoned)
     */
    void await(Pending p, long deadline) {
        while (!p.done) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            if (readerRole.tryLock()) {
                boolean handedOver = false;
                try {
                    handedOver = readUntil(p, deadline);
                } finally {
                    readerRole.unlock();
                    if (!handedOver) {
                        wakeNextReader();
                    }
                }
                if (!handedOver) {
                    continue;
                }
                left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
            }
            LockSupport.parkNanos(this, left);
        }
        if (!p.done) {
            p.abandoned = true;
            if (!p.done) {
                throw new RequestTimeoutException(p.operation(this) + ": no reply within "
                        + client.options().timeout().toMillis() + " ms (ETIMEDOUT)");
            }
        }
    }

    /** Wakes the first waiter in the FIFO whose reply has not come, to take the reader role. */
    private void wakeNextReader() {
        Thread next = null;
        fifoLock.lock();
        try {
            for (Pending q : fifo) {
                if (!q.done && !q.abandoned) {
                    next = q.waiter;
                    break;
                }
            }
        } finally {
            fifoLock.unlock();
        }
        if (next != null) {
            LockSupport.unpark(next);
        }
    }

    /**
     * As the reader, until {@code p} is done, the deadline or the end. Returns true if it
     * stopped to let the dispatcher, which waits for the role, deliver events this reading
     * queued (the caller then waits to be woken rather than take the role back at once).
     */
    private boolean readUntil(Pending p, long deadline) {
        for (;;) {
            processInput();
            if (p.done || dead) {
                return false;
            }
            if (client.hasEvents() && readerRole.hasQueuedThreads()) {
                return true;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            fill(left);
        }
    }

    /**
     * The dispatcher's turn as the reader: reads until there are events to deliver, the
     * connection ends or the client stops needing a reader ({@link #wakeReader()} ends the wait).
     * The caller holds the role ({@link #lockReader()}).
     */
    void readForDispatcher() {
        for (;;) {
            processInput();
            if (dead || client.hasEvents() || !client.wantsReader()) {
                return;
            }
            fill(Long.MAX_VALUE);
        }
    }

    /** Takes the reader role, waiting for whoever holds it. */
    void lockReader() {
        readerRole.lock();
    }

    /** Gives the reader role up and wakes the next waiter. */
    void unlockReader() {
        readerRole.unlock();
        wakeNextReader();
    }

    /** Ends a reader's wait in {@code select} (it then looks at why it waits). Any thread. */
    void wakeReader() {
        readSelector.wakeup();
    }

    /** Reads more input, waiting at most {@code nanos} for some. As the reader. */
    private void fill(long nanos) {
        try {
            if (drained) {
                readSelector.selectedKeys().clear();
                if (nanos == Long.MAX_VALUE) {
                    readSelector.select();
                } else {
                    readSelector.select(Math.max(1, (nanos + 999_999) / 1_000_000));
                }
                if (dead) {
                    return;
                }
            }
            makeRoom();
            int room = in.remaining();
            int n = channel.read(in);
            if (n < 0) {
                kill(new ConnectionException("ECONNRESET", "connection to pbusd at " + path
                        + " lost: the server closed it (ECONNRESET)"));
                return;
            }
            drained = n < room;
        } catch (IOException | RuntimeException e) {
            if (!dead) {
                kill(new ConnectionException("ECONNRESET", "connection to pbusd at " + path + " lost: " + e
                        + " (ECONNRESET)", e));
            }
        }
    }

    /** Reads what the socket has now, without waiting, and handles it (after a failed write). */
    private void readAvailable() {
        try {
            for (int k = 0; k < 16 && !dead; k++) {
                makeRoom();
                int n = channel.read(in);
                processInput();
                if (n <= 0) {
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            // The socket is going anyway: whatever could be read has been.
        }
    }

    /** Room for a read: the unprocessed bytes moved to the front, the buffer grown for a frame longer than it. */
    private void makeRoom() {
        int avail = in.position() - inStart;
        int need = INPUT_MIN / 4;
        if (avail >= Wire.HEADER) {
            int length = in.getInt(inStart);
            if (length > avail) {
                need = Math.max(need, length - avail);
            }
        }
        if (in.capacity() - in.position() >= need) {
            return;
        }
        if (in.capacity() - avail >= need) {
            in.limit(in.position()).position(inStart);
            in.compact();
            inStart = 0;
            return;
        }
        ByteBuffer bigger = ByteBuffer.allocateDirect(Math.max(avail + need, 2 * in.capacity())).order(ByteOrder.LITTLE_ENDIAN);
        in.limit(in.position()).position(inStart);
        bigger.put(in);
        in = bigger;
        inStart = 0;
    }

    /** Handles every whole frame in the input. As the reader. */
    private void processInput() {
        try {
            for (;;) {
                if (dead) {
                    return;
                }
                int avail = in.position() - inStart;
                if (avail < Wire.HEADER) {
                    break;
                }
                int length = in.getInt(inStart);
                int type = in.getShort(inStart + 4) & 0xFFFF;
                int flags = in.getShort(inStart + 6) & 0xFFFF;
                int id = in.getInt(inStart + 8);
                if (flags != 0 || Integer.compareUnsigned(length, Wire.HEADER) < 0
                        || Integer.compareUnsigned(length, maxFrame) > 0) {
                    throw new ProtocolErrorException("frame header: length " + Integer.toUnsignedString(length)
                            + ", flags 0x" + Integer.toHexString(flags) + " (the limit is " + maxFrame + " bytes, flags 0)");
                }
                if (avail < length) {
                    break;
                }
                int start = inStart;
                inStart += length;
                handleFrame(type, id, body.reset(in, start + Wire.HEADER, start + length));
            }
            if (inStart == in.position()) {
                in.clear();
                inStart = 0;
            }
        } catch (ProtocolErrorException e) {
            kill(new ProtocolErrorException("connection to pbusd at " + path + ": " + e.getMessage() + " (EPROTO)"));
        }
    }

    private void handleFrame(int type, int id, Wire.Body b) {
        if (type == Wire.NOTIFY) {
            if (id != 0) {
                throw new ProtocolErrorException("NOTIFY with id " + Integer.toUnsignedString(id));
            }
            handleNotify(b);
            return;
        }
        if (type == Wire.SERVICE && id == 0) {
            return; // a service watch's news: this client watches none
        }
        Pending head;
        fifoLock.lock();
        try {
            head = fifo.peekFirst();
            if (head != null && head.id == id) {
                fifo.pollFirst();
            } else {
                head = null;
            }
        } finally {
            fifoLock.unlock();
        }
        if (head == null) {
            if (type == Wire.ERROR) {
                // About the connection (too many clients, a frame it could not read): it closes next.
                Wire.ErrorReply e = Wire.error(b);
                kill(new ServerErrorException("connection to pbusd at " + path, e.code(), e.message()));
                return;
            }
            throw new ProtocolErrorException(Wire.typeName(type) + " with id " + Integer.toUnsignedString(id)
                    + " answers no request");
        }
        if (type != Wire.ERROR && type != head.type + 1) {
            // head has left the FIFO, so kill() will not fail it: fail it here, or its
            // waiter would spin until its timeout.
            ProtocolErrorException e = new ProtocolErrorException(Wire.typeName(type) + " in reply to "
                    + Wire.typeName(head.type));
            head.error = new ProtocolErrorException(head.operation(this) + ": " + e.getMessage() + " (EPROTO)");
            complete(head);
            throw e;
        }
        if (head.abandoned) {
            head.lateReply(this, type, b);
            return;
        }
        try {
            if (type == Wire.ERROR) {
                head.refused(this, Wire.error(b));
            } else {
                head.reply(this, b);
            }
        } catch (ProtocolErrorException e) {
            head.error = new ProtocolErrorException(head.operation(this) + ": " + e.getMessage() + " (EPROTO)");
            complete(head);
            throw e;
        }
        complete(head);
    }

    private static void complete(Pending p) {
        p.done = true;
        LockSupport.unpark(p.waiter);
    }

    private void handleNotify(Wire.Body b) {
        Schema schema = client.schemaOrNull();
        int serverId = b.u32();
        long count = b.u32() & 0xFFFFFFFFL;
        if (b.bad || serverId == 0 || count == 0 || schema == null || count > schema.paramCount()) {
            throw new ProtocolErrorException("malformed NOTIFY");
        }
        Value[] values = new Value[(int) count];
        for (int k = 0; k < count; k++) {
            values[k] = Wire.value(b, schema);
        }
        if (!b.done()) {
            throw new ProtocolErrorException("malformed NOTIFY: bytes left over");
        }
        Subscription s;
        fifoLock.lock();
        try {
            s = byServerId.get(serverId);
        } finally {
            fifoLock.unlock();
        }
        if (s != null) {
            s.deliver(values);
        }
    }

    // ---- Ending ----------------------------------------------------------------------------------------------------------

    /**
     * Ends the connection (once; later calls do nothing): closes the socket, fails every
     * request still waiting for its reply and tells the client. Any thread; holds no lock
     * of the client when it calls it.
     */
    void kill(ParambusException why) {
        if (!killed.compareAndSet(false, true)) {
            return;
        }
        cause = why;
        dead = true;
        readSelector.wakeup();
        try {
            channel.close();
        } catch (IOException e) {
            // Closing a socket loses nothing that matters here.
        }
        List<Pending> waiting;
        fifoLock.lock();
        try {
            waiting = new ArrayList<>(fifo);
            fifo.clear();
            byServerId.clear();
        } finally {
            fifoLock.unlock();
        }
        for (Pending p : waiting) {
            if (!p.done) {
                p.error = failure(p, why);
                complete(p);
            }
        }
        closeSelectors();
        client.connectionLost(this, why);
    }

    private ParambusException failure(Pending p, ParambusException why) {
        if (why instanceof ServerErrorException se && !(se instanceof SetRefusedException)) {
            return new ServerErrorException(p.operation(this), se.code(), se.serverMessage());
        }
        if (why instanceof ProtocolErrorException || why instanceof RequestTimeoutException) {
            return new ConnectionException("ECONNRESET", p.operation(this) + ": connection dropped: " + why.getMessage(), why);
        }
        return new ConnectionException("ECONNRESET", p.operation(this) + ": connection lost before the reply"
                + (p.sent ? " (the request may have been applied)" : "") + ": " + why.getMessage(), why);
    }

    private void closeSelectors() {
        // A selector is closed by a thread that does not select on it: the one
        // that holds the role closes the read selector when it lets go (below, or
        // here if nobody holds it now). Closing it under another thread's select
        // would wait for that select to end, which the wakeup above brings.
        try {
            readSelector.close();
        } catch (IOException e) {
            // Nothing to lose.
        }
        if (writeLock.tryLock()) {
            try {
                if (writeSelector != null) {
                    writeSelector.close();
                }
            } catch (IOException e) {
                // Nothing to lose.
            } finally {
                writeLock.unlock();
            }
        }
    }

    /** The connection in words: its socket and state. */
    @Override
    public String toString() {
        return "Connection[" + path + (dead ? ", dead: " + cause.getMessage() : "") + "]";
    }
}
