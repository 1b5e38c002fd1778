package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A prepared SPI message ({@link SpiDevice#prepare}): its transmit and receive buffers
 * and its {@code spi_ioc_transfer} array, built once in a confined arena this object
 * owns, and the {@code SPI_IOC_MESSAGE(n)} request number computed once. {@link #run()} is
 * the ioctl and nothing else: no allocation, no copy, no setup. Fill the transmit buffers
 * in place ({@link #tx(int)}, or copy an array in with {@link #setTx}) and read what was
 * received in place ({@link #rx(int)}, or copy it out with {@link #getRx}).
 *
 * <p>Threads: the arena is confined: this object is used by the thread that prepared it,
 * only (another thread's run, buffer access or close fails with
 * {@link WrongThreadException}). Runs are serialised with the device's other calls.
 *
 * <p>Ownership: {@link #close()} closes the arena (the buffers become inaccessible, never
 * dangling). The message borrows its {@link SpiDevice}: after the device is closed, a run
 * fails with {@code EBADF}; close prepared messages before or after, as convenient.
 */
public final class SpiPreparedMessage implements AutoCloseable {
    private static final String RUN = "SPI prepared message";

    private final DeviceFile file;
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment transfers;
    private final MemorySegment[] tx, rx;
    private final int[] lengths;
    private final int count;
    private final long request;
    private boolean closed;

    SpiPreparedMessage(SpiDevice device, SpiTransfer[] spec) {
        this.file = device.file();
        this.count = spec.length;
        this.request = SpiUapi.message(count);
        this.tx = new MemorySegment[count];
        this.rx = new MemorySegment[count];
        this.lengths = new int[count];
        try {
            transfers = arena.allocate(SpiUapi.TRANSFER.byteSize() * count, SpiUapi.TRANSFER.byteAlignment());
            for (int i = 0; i < count; i++) {
                SpiTransfer t = spec[i];
                lengths[i] = t.length;
                long b = i * SpiUapi.SIZE;
                if (t.tx) {
                    tx[i] = arena.allocate(t.length, 64);
                    if (t.txArray != null) {
                        MemorySegment.copy(t.txArray, t.txOffset, tx[i], JAVA_BYTE, 0, t.length);
                    } else if (t.txSegment != null) {
                        MemorySegment.copy(t.txSegment, 0, tx[i], 0, t.length);
                    }
                    transfers.set(JAVA_LONG, b + SpiUapi.TX_BUF, tx[i].address());
                }
                if (t.rx) {
                    rx[i] = arena.allocate(t.length, 64);
                    transfers.set(JAVA_LONG, b + SpiUapi.RX_BUF, rx[i].address());
                }
                transfers.set(JAVA_INT, b + SpiUapi.LEN, t.length);
                transfers.set(JAVA_INT, b + SpiUapi.SPEED_HZ, t.speedHz);
                transfers.set(JAVA_SHORT, b + SpiUapi.DELAY_USECS, (short) t.delayUsecs);
                transfers.set(JAVA_BYTE, b + SpiUapi.BITS_PER_WORD, (byte) t.bitsPerWord);
                transfers.set(JAVA_BYTE, b + SpiUapi.CS_CHANGE, (byte) (t.csChange ? 1 : 0));
                transfers.set(JAVA_BYTE, b + SpiUapi.TX_NBITS, (byte) t.txNbits);
                transfers.set(JAVA_BYTE, b + SpiUapi.RX_NBITS, (byte) t.rxNbits);
                transfers.set(JAVA_BYTE, b + SpiUapi.WORD_DELAY_USECS, (byte) t.wordDelayUsecs);
            }
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * Runs the message: one {@code SPI_IOC_MESSAGE(n)} ioctl. Returns the bytes transferred.
     *
     * @throws HwException EINVAL (a setting the controller refuses), ESHUTDOWN (device
     *         removed), EBADF (device closed), ETIMEDOUT, EIO
     * @throws IllegalStateException after {@link #close()}
     * @throws WrongThreadException from another thread than the one that prepared it
     */
    public int run() {
        if (closed) {
            throw new IllegalStateException("the prepared SPI message on " + file.path() + " is closed");
        }
        ReentrantLock l = file.lock();
        l.lock();
        try {
            int r = file.ioctlOrErrno(RUN, request, transfers);
            if (r < 0) {
                throw new HwException(RUN, file.path(), -r, count + (count == 1 ? " transfer" : " transfers"));
            }
            return r;
        } finally {
            l.unlock();
        }
    }

    /** The number of transfers. */
    public int size() {
        return count;
    }

    /** The length of transfer index in bytes. */
    public int length(int index) {
        return lengths[Objects.checkIndex(index, count)];
    }

    /**
     * The transmit buffer of transfer index ({@link #length(int)} bytes), to fill in place
     * before a run; valid until {@link #close()}.
     *
     * @throws IllegalArgumentException if the transfer does not send
     */
    public MemorySegment tx(int index) {
        MemorySegment s = tx[Objects.checkIndex(index, count)];
        if (s == null) {
            throw new IllegalArgumentException("transfer " + index + " of the prepared SPI message does not send");
        }
        return s;
    }

    /**
     * The receive buffer of transfer index, holding what the last run received; valid
     * until {@link #close()}.
     *
     * @throws IllegalArgumentException if the transfer does not receive
     */
    public MemorySegment rx(int index) {
        MemorySegment s = rx[Objects.checkIndex(index, count)];
        if (s == null) {
            throw new IllegalArgumentException("transfer " + index + " of the prepared SPI message does not receive");
        }
        return s;
    }

    /** Copies src into the start of transmit buffer index (src.length ≤ the transfer's length). */
    public void setTx(int index, byte[] src) {
        setTx(index, src, 0, src.length);
    }

    /** Copies src[offset, offset+length) into the start of transmit buffer index. */
    public void setTx(int index, byte[] src, int offset, int length) {
        MemorySegment.copy(src, offset, tx(index), JAVA_BYTE, 0, length);
    }

    /** Copies the start of receive buffer index into dst (dst.length ≤ the transfer's length). */
    public void getRx(int index, byte[] dst) {
        getRx(index, dst, 0, dst.length);
    }

    /** Copies length bytes from the start of receive buffer index into dst[offset, offset+length). */
    public void getRx(int index, byte[] dst, int offset, int length) {
        MemorySegment.copy(rx(index), JAVA_BYTE, 0, dst, offset, length);
    }

    /** Closes the arena: the buffers and the transfer array are freed. Idempotent; the preparing thread only. */
    @Override
    public void close() {
        if (!closed) {
            arena.close();
            closed = true;
        }
    }
}
