package io.parambus.hw;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.parambus.internal.Native;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An SPI device through spidev ({@code /dev/spidevB.C}): any bus, any chip select. The
 * device's settings — the 32-bit mode ({@link SpiMode}), bits per word, maximum speed —
 * and messages of one or more transfers ({@code SPI_IOC_MESSAGE(n)}), each with its own
 * settings.
 *
 * <pre>{@code
 * try (SpiDevice spi = SpiDevice.open(0, 1)) {
 *     spi.setMode(SpiMode.MODE_3);
 *     spi.setMaxSpeedHz(2_000_000);
 *     byte[] answer = new byte[5];
 *     spi.writeThenRead(new byte[] {0x0a, 0x0b, 0x0c}, answer); // one message, CS held
 *     try (SpiPreparedMessage m = spi.prepare(SpiTransfer.write(new byte[] {0x03, 0x00}),
 *             SpiTransfer.duplex(24).speedHz(4_000_000))) {
 *         m.tx(1).set(ValueLayout.JAVA_BYTE, 0, (byte) 7);
 *         m.run();                                             // one ioctl, nothing allocated
 *         byte first = m.rx(1).get(ValueLayout.JAVA_BYTE, 0);
 *     }
 * }
 * }</pre>
 *
 * <p>Chip select: one message is one chip-select assertion; it stays active between the
 * transfers of a message unless a transfer asks for {@link SpiTransfer#csChange}.
 *
 * <p>The bufsiz limit: spidev copies every message through a buffer of {@code bufsiz}
 * bytes ({@code /sys/module/spidev/parameters/bufsiz}, 4096 by default, read at open:
 * {@link #bufferSize()}); the transmit lengths of one message add up to at most that,
 * and so do the receive lengths. Longer messages fail with {@code EMSGSIZE} (refused here
 * before the ioctl when they go through this object's buffers, by the kernel otherwise);
 * they are never split, because a split message would release chip select in between.
 * Raise it with {@code spidev.bufsiz=N}.
 *
 * <p>Memory: the {@code spi_ioc_transfer} array of the longest message the uAPI can
 * encode (511 transfers), a transmit and a receive staging buffer of {@code bufsiz}
 * bytes each and {@code bufsiz} zero bytes (the transmit side of a transfer that sends
 * none of its own) are allocated once, at open, from the descriptor's arena: a call allocates
 * nothing. Arrays and heap segments are copied through the staging buffers, native
 * segments go to the kernel as they are. {@link #prepare} builds a message once, in an
 * arena of its own, to run many times.
 *
 * <p>Threads: any thread; calls are serialised by the device's lock. Errors: arguments
 * refused before any system call are {@link IllegalArgumentException}s; everything the
 * kernel refuses is an {@link HwException} naming the operation, the node and the errno
 * ({@code EINVAL}: a mode, word size or speed the controller does not take;
 * {@code EMSGSIZE}: over bufsiz; {@code ESHUTDOWN}: the device or controller was removed).
 */
public final class SpiDevice implements AutoCloseable {
    static final int EMSGSIZE = 90;
    private static final String BUFSIZ = "/sys/module/spidev/parameters/bufsiz";
    private static final int BUFSIZ_DEFAULT = 4096;
    private static final String OPEN = "SPI open", SET_MODE = "SPI set mode", GET_MODE = "SPI read mode",
            SET_BITS = "SPI set bits per word", GET_BITS = "SPI read bits per word", SET_SPEED = "SPI set max speed",
            GET_SPEED = "SPI read max speed", TRANSFER = "SPI transfer";

    private final DeviceFile file;
    private final int bufsiz;
    private final MemorySegment setting;
    private final MemorySegment transfers;
    private final MemorySegment txStage;
    private final MemorySegment rxStage;
    /** bufsiz zero bytes, never written: the transmit side of a transfer that sends no data of its own. */
    private final MemorySegment zeros;

    private SpiDevice(DeviceFile file, int bufsiz) {
        this.file = file;
        this.bufsiz = bufsiz;
        Arena a = file.arena();
        setting = a.allocate(JAVA_INT);
        transfers = a.allocate(SpiUapi.TRANSFER.byteSize() * SpiUapi.MAX_TRANSFERS, SpiUapi.TRANSFER.byteAlignment());
        txStage = a.allocate(bufsiz, 64);
        rxStage = a.allocate(bufsiz, 64);
        zeros = a.allocate(bufsiz, 64);
    }

    /**
     * Opens a spidev node, e.g. {@code "/dev/spidev0.0"}, and reads spidev's bufsiz.
     *
     * @throws HwException ENOENT (no such node: no spidev bound to that device), EACCES,
     *         ENOTTY (not a spidev node)
     */
    public static SpiDevice open(String path) {
        Objects.requireNonNull(path, "path");
        int bufsiz = readBufsiz();
        DeviceFile f = DeviceFile.open(OPEN, path, Native.O_RDWR);
        try {
            SpiDevice d = new SpiDevice(f, bufsiz);
            d.mode(OPEN); // the check that this is a spidev node (anything else: ENOTTY)
            return d;
        } catch (RuntimeException e) {
            f.close();
            throw e;
        }
    }

    /** Opens {@code /dev/spidev<bus>.<chipSelect>}: any bus, any chip select. */
    public static SpiDevice open(int bus, int chipSelect) {
        if (bus < 0 || chipSelect < 0) {
            throw new IllegalArgumentException("SPI bus " + bus + ", chip select " + chipSelect);
        }
        return open("/dev/spidev" + bus + "." + chipSelect);
    }

    private static int readBufsiz() {
        try {
            long v = Long.parseLong(Files.readString(Path.of(BUFSIZ), StandardCharsets.US_ASCII).strip());
            return v > 0 && v <= Integer.MAX_VALUE ? (int) v : BUFSIZ_DEFAULT;
        } catch (IOException | NumberFormatException e) {
            return BUFSIZ_DEFAULT; // spidev's own default when the parameter is not visible
        }
    }

    /** The node's path. */
    public String path() {
        return file.path();
    }

    /** spidev's bufsiz: the most bytes a message sends, and receives (see the class comment). */
    public int bufferSize() {
        return bufsiz;
    }

    DeviceFile file() {
        return file;
    }

    /* Takes the lock, then EBADF if closed, before the closed arena's memory is touched. */
    private void lockOpen(String operation) {
        file.lock().lock();
        try {
            file.fd(operation);
        } catch (RuntimeException e) {
            file.lock().unlock();
            throw e;
        }
    }

    // ---- settings ----

    /**
     * Sets the full 32-bit mode ({@code SPI_IOC_WR_MODE32}): {@link SpiMode#MODE_0}..3
     * or'ed with the other {@link SpiMode} flags.
     *
     * @throws HwException EINVAL (a bit the controller does not support: the kernel keeps
     *         the old mode)
     */
    public void setMode(int mode) {
        ReentrantLock l = file.lock();
        lockOpen(SET_MODE);
        try {
            setting.set(JAVA_INT, 0, mode);
            int r = file.ioctlOrErrno(SET_MODE, SpiUapi.WR_MODE32, setting);
            if (r < 0) {
                throw new HwException(SET_MODE, file.path(), -r, SpiMode.toString(mode));
            }
        } finally {
            l.unlock();
        }
    }

    /** The 32-bit mode ({@code SPI_IOC_RD_MODE32}). */
    public int mode() {
        return mode(GET_MODE);
    }

    private int mode(String op) {
        ReentrantLock l = file.lock();
        lockOpen(op);
        try {
            file.ioctl(op, SpiUapi.RD_MODE32, setting);
            return setting.get(JAVA_INT, 0);
        } finally {
            l.unlock();
        }
    }

    /** Sets the word size in bits (0 means 8; 1..255: the controller decides which it takes, EINVAL otherwise). */
    public void setBitsPerWord(int bits) {
        if (bits < 0 || bits > 255) {
            throw new IllegalArgumentException("SPI bits per word " + bits + " is out of 0..255");
        }
        ReentrantLock l = file.lock();
        lockOpen(SET_BITS);
        try {
            setting.set(JAVA_BYTE, 0, (byte) bits);
            int r = file.ioctlOrErrno(SET_BITS, SpiUapi.WR_BITS_PER_WORD, setting);
            if (r < 0) {
                throw new HwException(SET_BITS, file.path(), -r, bits + " bits");
            }
        } finally {
            l.unlock();
        }
    }

    /** The word size in bits (0 means 8). */
    public int bitsPerWord() {
        ReentrantLock l = file.lock();
        lockOpen(GET_BITS);
        try {
            file.ioctl(GET_BITS, SpiUapi.RD_BITS_PER_WORD, setting);
            return setting.get(JAVA_BYTE, 0) & 0xff;
        } finally {
            l.unlock();
        }
    }

    /** Sets the default clock in Hz of the transfers that do not set their own. */
    public void setMaxSpeedHz(int hz) {
        if (hz < 0) {
            throw new IllegalArgumentException("SPI speed " + hz + " Hz");
        }
        ReentrantLock l = file.lock();
        lockOpen(SET_SPEED);
        try {
            setting.set(JAVA_INT, 0, hz);
            int r = file.ioctlOrErrno(SET_SPEED, SpiUapi.WR_MAX_SPEED_HZ, setting);
            if (r < 0) {
                throw new HwException(SET_SPEED, file.path(), -r, hz + " Hz");
            }
        } finally {
            l.unlock();
        }
    }

    /** The default clock in Hz. */
    public int maxSpeedHz() {
        ReentrantLock l = file.lock();
        lockOpen(GET_SPEED);
        try {
            file.ioctl(GET_SPEED, SpiUapi.RD_MAX_SPEED_HZ, setting);
            return setting.get(JAVA_INT, 0);
        } finally {
            l.unlock();
        }
    }

    // ---- messages ----

    /* Fills spi_ioc_transfer number i; the caller holds the lock. */
    private void set(int i, long tx, long rx, int length, SpiTransfer t) {
        long b = i * SpiUapi.SIZE;
        MemorySegment k = transfers;
        k.set(JAVA_LONG, b + SpiUapi.TX_BUF, tx);
        k.set(JAVA_LONG, b + SpiUapi.RX_BUF, rx);
        k.set(JAVA_INT, b + SpiUapi.LEN, length);
        k.set(JAVA_INT, b + SpiUapi.SPEED_HZ, t == null ? 0 : t.speedHz);
        k.set(JAVA_SHORT, b + SpiUapi.DELAY_USECS, (short) (t == null ? 0 : t.delayUsecs));
        k.set(JAVA_BYTE, b + SpiUapi.BITS_PER_WORD, (byte) (t == null ? 0 : t.bitsPerWord));
        k.set(JAVA_BYTE, b + SpiUapi.CS_CHANGE, (byte) (t != null && t.csChange ? 1 : 0));
        k.set(JAVA_BYTE, b + SpiUapi.TX_NBITS, (byte) (t == null ? 0 : t.txNbits));
        k.set(JAVA_BYTE, b + SpiUapi.RX_NBITS, (byte) (t == null ? 0 : t.rxNbits));
        k.set(JAVA_BYTE, b + SpiUapi.WORD_DELAY_USECS, (byte) (t == null ? 0 : t.wordDelayUsecs));
        k.set(JAVA_BYTE, b + SpiUapi.WORD_DELAY_USECS + 1, (byte) 0);
    }

    /* SPI_IOC_MESSAGE(count) of the array as filled; the caller holds the lock. */
    private int run(int count) {
        int r = file.ioctlOrErrno(TRANSFER, SpiUapi.message(count), transfers);
        if (r < 0) {
            throw new HwException(TRANSFER, file.path(), -r, describe(count));
        }
        return r;
    }

    private String describe(int count) {
        long tx = 0, rx = 0;
        for (int i = 0; i < count; i++) {
            long b = i * SpiUapi.SIZE;
            int len = transfers.get(JAVA_INT, b + SpiUapi.LEN);
            tx += transfers.get(JAVA_LONG, b + SpiUapi.TX_BUF) != 0 ? len : 0;
            rx += transfers.get(JAVA_LONG, b + SpiUapi.RX_BUF) != 0 ? len : 0;
        }
        return count + (count == 1 ? " transfer, " : " transfers, ") + tx + " bytes out, " + rx + " bytes in";
    }

    private HwException tooLong(long tx, long rx) {
        return new HwException(TRANSFER, file.path(), EMSGSIZE, tx + " bytes out, " + rx
                + " bytes in: spidev's bufsiz is " + bufsiz + " (" + BUFSIZ + ")");
    }

    /**
     * Runs transfers as ONE message ({@code SPI_IOC_MESSAGE(n)}, one chip-select
     * assertion), each with its own settings; 1 to 511 transfers. Receive buffers are
     * filled in place. Returns the number of bytes transferred (the kernel's count).
     *
     * @throws HwException EMSGSIZE (over bufsiz), EINVAL (a setting the controller
     *         refuses), ESHUTDOWN, ETIMEDOUT, EIO
     */
    public int transfer(SpiTransfer... transfers) {
        return transfer(transfers, transfers.length);
    }

    /** {@link #transfer(SpiTransfer...)} of transfers[0, count): a kept array used for shorter messages too. */
    public int transfer(SpiTransfer[] message, int count) {
        Objects.checkFromIndexSize(0, count, message.length);
        if (count < 1 || count > SpiUapi.MAX_TRANSFERS) {
            throw new IllegalArgumentException("an SPI message of " + count + " transfers: 1.."
                    + SpiUapi.MAX_TRANSFERS + " (what SPI_IOC_MESSAGE can encode)");
        }
        long txNeed = 0, rxNeed = 0;
        for (int i = 0; i < count; i++) {
            SpiTransfer t = message[i];
            txNeed += t.txStaged() || (t.tx && t.txSegment == null) ? t.length : 0; // arrays, and zeros
            rxNeed += t.rxStaged() ? t.length : 0;
        }
        if (txNeed > bufsiz || rxNeed > bufsiz) {
            throw tooLong(txNeed, rxNeed);
        }
        ReentrantLock l = file.lock();
        lockOpen(TRANSFER);
        try {
            long txAt = 0, rxAt = 0;
            for (int i = 0; i < count; i++) {
                SpiTransfer t = message[i];
                long tx = 0, rx = 0;
                if (t.txStaged()) {
                    if (t.txArray != null) {
                        MemorySegment.copy(t.txArray, t.txOffset, txStage, JAVA_BYTE, txAt, t.length);
                    } else {
                        MemorySegment.copy(t.txSegment, 0, txStage, txAt, t.length);
                    }
                    tx = txStage.address() + txAt;
                    txAt += t.length;
                } else if (t.txSegment != null) {
                    tx = t.txSegment.address();
                } else if (t.tx) {
                    tx = zeros.address(); // length only: zeros (a transfer without any buffer is skipped)
                }
                if (t.rxStaged()) {
                    rx = rxStage.address() + rxAt;
                    rxAt += t.length;
                } else if (t.rxSegment != null) {
                    rx = t.rxSegment.address();
                }
                set(i, tx, rx, t.length, t);
            }
            int r = run(count);
            rxAt = 0;
            for (int i = 0; i < count; i++) {
                SpiTransfer t = message[i];
                if (t.rxStaged()) {
                    if (t.rxArray != null) {
                        MemorySegment.copy(rxStage, JAVA_BYTE, rxAt, t.rxArray, t.rxOffset, t.length);
                    } else if (t.rxSegment != null) {
                        MemorySegment.copy(rxStage, rxAt, t.rxSegment, 0, t.length);
                    }
                    rxAt += t.length;
                }
            }
            return r;
        } finally {
            l.unlock();
        }
    }

    private void checkStaged(long tx, long rx) {
        if (tx > bufsiz || rx > bufsiz) {
            throw tooLong(tx, rx);
        }
    }

    /**
     * Full duplex: sends tx while receiving as many bytes into rx (rx may be tx itself).
     * One transfer. Returns the bytes transferred.
     */
    public int transfer(byte[] tx, byte[] rx) {
        if (tx.length != rx.length || tx.length == 0) {
            throw new IllegalArgumentException("a full-duplex SPI transfer of " + tx.length + " bytes out and "
                    + rx.length + " in: the same number both ways, at least 1");
        }
        checkStaged(tx.length, rx.length);
        ReentrantLock l = file.lock();
        lockOpen(TRANSFER);
        try {
            MemorySegment.copy(tx, 0, txStage, JAVA_BYTE, 0, tx.length);
            set(0, txStage.address(), rxStage.address(), tx.length, null);
            int r = run(1);
            MemorySegment.copy(rxStage, JAVA_BYTE, 0, rx, 0, rx.length);
            return r;
        } finally {
            l.unlock();
        }
    }

    /** Full duplex with native segments of the same size, handed to the kernel as they are (no copy). */
    public int transfer(MemorySegment tx, MemorySegment rx) {
        return transfer(SpiTransfer.duplex(tx, rx));
    }

    /** Sends data (the received bytes are dropped). Returns the bytes transferred. */
    public int write(byte... data) {
        if (data.length == 0) {
            throw new IllegalArgumentException("an SPI write of 0 bytes");
        }
        checkStaged(data.length, 0);
        ReentrantLock l = file.lock();
        lockOpen(TRANSFER);
        try {
            MemorySegment.copy(data, 0, txStage, JAVA_BYTE, 0, data.length);
            set(0, txStage.address(), 0, data.length, null);
            return run(1);
        } finally {
            l.unlock();
        }
    }

    /** Receives into.length bytes (the controller sends zeros). Returns the bytes transferred. */
    public int read(byte[] into) {
        if (into.length == 0) {
            throw new IllegalArgumentException("an SPI read of 0 bytes");
        }
        checkStaged(0, into.length);
        ReentrantLock l = file.lock();
        lockOpen(TRANSFER);
        try {
            set(0, 0, rxStage.address(), into.length, null);
            int r = run(1);
            MemorySegment.copy(rxStage, JAVA_BYTE, 0, into, 0, into.length);
            return r;
        } finally {
            l.unlock();
        }
    }

    /**
     * Half duplex under one chip select: sends write, then receives into.length bytes —
     * ONE message of two transfers, chip select held between them (a command and its
     * answer). Returns the bytes transferred (both lengths).
     */
    public int writeThenRead(byte[] write, byte[] into) {
        if (write.length == 0 || into.length == 0) {
            throw new IllegalArgumentException("an SPI write-then-read of " + write.length + " and " + into.length
                    + " bytes: at least 1 each");
        }
        checkStaged(write.length, into.length);
        ReentrantLock l = file.lock();
        lockOpen(TRANSFER);
        try {
            MemorySegment.copy(write, 0, txStage, JAVA_BYTE, 0, write.length);
            set(0, txStage.address(), 0, write.length, null);
            set(1, 0, rxStage.address(), into.length, null);
            int r = run(2);
            MemorySegment.copy(rxStage, JAVA_BYTE, 0, into, 0, into.length);
            return r;
        } finally {
            l.unlock();
        }
    }

    /** {@link #writeThenRead(byte[], byte[])} with segments (native ones go to the kernel as they are). */
    public int writeThenRead(MemorySegment write, MemorySegment into) {
        return transfer(SpiTransfer.write(write), SpiTransfer.read(into));
    }

    /**
     * Prepares a message of transfers to run many times: its buffers (one per direction a
     * transfer has, aligned to 64 bytes, the transmit ones filled with the transfer's data
     * or zeros) and its {@code spi_ioc_transfer} array are built once, in a confined arena
     * the prepared message owns; see {@link SpiPreparedMessage}. The buffers of the given
     * transfers are only read for the initial content.
     *
     * @throws HwException EMSGSIZE (over bufsiz: checked here so that runs cannot fail for it)
     */
    public SpiPreparedMessage prepare(SpiTransfer... transfers) {
        if (transfers.length < 1 || transfers.length > SpiUapi.MAX_TRANSFERS) {
            throw new IllegalArgumentException("an SPI message of " + transfers.length + " transfers: 1.."
                    + SpiUapi.MAX_TRANSFERS);
        }
        long tx = 0, rx = 0;
        for (SpiTransfer t : transfers) {
            tx += t.tx ? t.length : 0;
            rx += t.rx ? t.length : 0;
        }
        if (tx > bufsiz || rx > bufsiz) {
            throw tooLong(tx, rx);
        }
        return new SpiPreparedMessage(this, transfers.clone());
    }

    /** Closes the descriptor and frees its native memory; idempotent. Later calls fail with EBADF. */
    @Override
    public void close() {
        file.close();
    }

    /** E.g. {@code "SpiDevice[/dev/spidev0.0]"}. */
    @Override
    public String toString() {
        return "SpiDevice[" + file.path() + "]";
    }
}
