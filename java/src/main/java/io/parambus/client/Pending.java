package io.parambus.client;

import io.parambus.ParambusException;

import java.nio.ByteBuffer;

/**
 * One request sent, or about to be, and what becomes of it: its reply's decoding, or the
 * error that replaced it. A subclass per kind of request encodes the frame and decodes
 * the reply in place, in the input buffer of whichever thread reads the socket (so a reply
 * is not copied before it is decoded). The fields are written by the sender (id, sent),
 * the reader (result, error, done) and the waiter (abandoned); {@link #done} is the
 * volatile flag that publishes the rest.
 */
abstract class Pending {
    /** The request's message type: its reply is this + 1, or ERROR. */
    final int type;
    /** The thread that waits for the reply (unparked when it comes). */
    final Thread waiter;
    /** The frame's id on its connection. */
    int id;
    /** The frame went out whole: the server may act on it. */
    volatile boolean sent;
    /** The reply came (or the connection ended): result or error is set. */
    volatile boolean done;
    /** The waiter gave up (timeout): a late reply is dropped. */
    volatile boolean abandoned;
    /** Why there is no result. */
    ParambusException error;

    Pending(int type) {
        this.type = type;
        this.waiter = Thread.currentThread();
    }

    /** Ready to be sent again on another connection (its frame never reached the first). */
    void reset() {
        id = 0;
        sent = false;
        done = false;
        abandoned = false;
        error = null;
    }

    /** The frame's length in bytes. */
    abstract long size();

    /** Writes the frame, with id {@code id}, at the buffer's position. */
    abstract void encode(ByteBuffer out, int id);

    /**
     * The reply of the right type arrived on {@code c}: decode it from {@code body}.
     *
     * @throws ProtocolErrorException if it is malformed
     */
    abstract void reply(Connection c, Wire.Body body);

    /** An ERROR answered the request. */
    void refused(Connection c, Wire.ErrorReply e) {
        error = new ServerErrorException(operation(c), e.code(), e.message());
    }

    /** The reply of a request whose waiter gave up: dropped, unless undoing it matters (a subscription). */
    void lateReply(Connection c, int replyType, Wire.Body body) {
    }

    /** What the request was, for messages: "get psu level". */
    abstract String operation(Connection c);
}
