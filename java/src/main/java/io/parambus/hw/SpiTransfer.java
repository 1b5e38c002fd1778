package io.parambus.hw;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * One transfer of an SPI message ({@link SpiDevice#transfer(SpiTransfer...)},
 * {@link SpiDevice#prepare(SpiTransfer...)}): a number of bytes clocked out of a
 * transmit buffer and/or into a receive buffer, with its own settings (speed, bits per
 * word, delays, chip-select change, wire widths; 0 means the device's setting).
 *
 * <p>Immutable: the setters return a new transfer. The buffers are the caller's
 * {@code byte[]}s or {@link MemorySegment}s, read (tx) and filled (rx) at the time of each
 * transfer; a transfer may be kept and used again and again (that allocates nothing). A
 * native segment is handed to the kernel as it is; arrays and heap segments are copied
 * through the device's staging buffers. The length-only forms ({@link #write(int)},
 * {@link #read(int)}, {@link #duplex(int)}) name a direction without a buffer: for
 * {@link SpiDevice#prepare} the prepared message allocates it; in a plain transfer a
 * transmit side without buffer sends zeros and what a receive side without buffer
 * receives is dropped (the device's buffers stand in: the SPI core skips a transfer that
 * has neither buffer, so one is always given).
 *
 * <p>Chip select: the transfers of one message are one chip-select assertion; CS stays
 * active between them unless a transfer sets {@link #csChange(boolean)} (CS released
 * after it; on the last transfer, a hint to keep CS active after the message).
 */
public final class SpiTransfer {
    final int length;
    final byte[] txArray, rxArray;
    final int txOffset, rxOffset;
    final MemorySegment txSegment, rxSegment;
    final boolean tx, rx;
    final int speedHz, delayUsecs, bitsPerWord, wordDelayUsecs, txNbits, rxNbits;
    final boolean csChange;

    private SpiTransfer(int length, boolean tx, byte[] txArray, int txOffset, MemorySegment txSegment, boolean rx,
            byte[] rxArray, int rxOffset, MemorySegment rxSegment, int speedHz, int delayUsecs, int bitsPerWord,
            boolean csChange, int wordDelayUsecs, int txNbits, int rxNbits) {
        if (length < 1) {
            throw new IllegalArgumentException("an SPI transfer of " + length + " bytes");
        }
        if (rxSegment != null && rxSegment.isReadOnly()) {
            throw new IllegalArgumentException("an SPI receive buffer that is a read-only segment");
        }
        this.length = length;
        this.tx = tx;
        this.txArray = txArray;
        this.txOffset = txOffset;
        this.txSegment = txSegment;
        this.rx = rx;
        this.rxArray = rxArray;
        this.rxOffset = rxOffset;
        this.rxSegment = rxSegment;
        this.speedHz = speedHz;
        this.delayUsecs = delayUsecs;
        this.bitsPerWord = bitsPerWord;
        this.csChange = csChange;
        this.wordDelayUsecs = wordDelayUsecs;
        this.txNbits = txNbits;
        this.rxNbits = rxNbits;
    }

    private static SpiTransfer of(int length, boolean tx, byte[] ta, int to, MemorySegment ts, boolean rx, byte[] ra,
            int ro, MemorySegment rs) {
        return new SpiTransfer(length, tx, ta, to, ts, rx, ra, ro, rs, 0, 0, 0, false, 0, 0, 0);
    }

    private SpiTransfer with(int speedHz, int delayUsecs, int bitsPerWord, boolean csChange, int wordDelayUsecs,
            int txNbits, int rxNbits) {
        return new SpiTransfer(length, tx, txArray, txOffset, txSegment, rx, rxArray, rxOffset, rxSegment, speedHz,
                delayUsecs, bitsPerWord, csChange, wordDelayUsecs, txNbits, rxNbits);
    }

    private static int size(MemorySegment s) {
        if (s.byteSize() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("an SPI buffer of " + s.byteSize() + " bytes");
        }
        return (int) s.byteSize();
    }

    /** Sends all of tx. */
    public static SpiTransfer write(byte[] tx) {
        return write(tx, 0, tx.length);
    }

    /** Sends tx[offset, offset+length). */
    public static SpiTransfer write(byte[] tx, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, tx.length);
        return of(length, true, tx, offset, null, false, null, 0, null);
    }

    /** Sends the bytes of tx. */
    public static SpiTransfer write(MemorySegment tx) {
        return of(size(tx), true, null, 0, tx, false, null, 0, null);
    }

    /** Sends length bytes: zeros in a plain transfer, the prepared buffer's content in a prepared one. */
    public static SpiTransfer write(int length) {
        return of(length, true, null, 0, null, false, null, 0, null);
    }

    /** Receives rx.length bytes into rx (the controller sends zeros). */
    public static SpiTransfer read(byte[] rx) {
        return read(rx, 0, rx.length);
    }

    /** Receives into rx[offset, offset+length). */
    public static SpiTransfer read(byte[] rx, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, rx.length);
        return of(length, false, null, 0, null, true, rx, offset, null);
    }

    /** Receives into the bytes of rx. */
    public static SpiTransfer read(MemorySegment rx) {
        return of(size(rx), false, null, 0, null, true, null, 0, rx);
    }

    /** Receives length bytes: into the prepared buffer in a prepared message, dropped in a plain one. */
    public static SpiTransfer read(int length) {
        return of(length, false, null, 0, null, true, null, 0, null);
    }

    /** Full duplex: sends tx while receiving as many bytes into rx (which may be tx itself). */
    public static SpiTransfer duplex(byte[] tx, byte[] rx) {
        if (tx.length != rx.length) {
            throw new IllegalArgumentException("a full-duplex SPI transfer of " + tx.length + " bytes out and "
                    + rx.length + " in: the same number both ways");
        }
        return of(tx.length, true, tx, 0, null, true, rx, 0, null);
    }

    /** Full duplex with segments of the same size. */
    public static SpiTransfer duplex(MemorySegment tx, MemorySegment rx) {
        if (tx.byteSize() != rx.byteSize()) {
            throw new IllegalArgumentException("a full-duplex SPI transfer of " + tx.byteSize() + " bytes out and "
                    + rx.byteSize() + " in: the same number both ways");
        }
        return of(size(tx), true, null, 0, tx, true, null, 0, rx);
    }

    /** Full duplex of length bytes with buffers the prepared message allocates. */
    public static SpiTransfer duplex(int length) {
        return of(length, true, null, 0, null, true, null, 0, null);
    }

    private static int check(String what, int v, int max) {
        if (v < 0 || v > max) {
            throw new IllegalArgumentException(what + " " + v + " is out of 0.." + max);
        }
        return v;
    }

    private static int nbits(String what, int v) {
        if (v != 0 && v != 1 && v != 2 && v != 4 && v != 8) {
            throw new IllegalArgumentException(what + " " + v + ": 0 (the device's), 1, 2, 4 or 8");
        }
        return v;
    }

    /** This transfer at hz (0: the device's speed). */
    public SpiTransfer speedHz(int hz) {
        return with(check("SPI speed (Hz)", hz, Integer.MAX_VALUE), delayUsecs, bitsPerWord, csChange, wordDelayUsecs,
                txNbits, rxNbits);
    }

    /** This transfer with words of bits (0: the device's; 1..255, the controller decides which it takes). */
    public SpiTransfer bitsPerWord(int bits) {
        return with(speedHz, delayUsecs, check("SPI bits per word", bits, 255), csChange, wordDelayUsecs, txNbits,
                rxNbits);
    }

    /** A delay after this transfer, before a chip-select change or the next transfer (0..65535 µs). */
    public SpiTransfer delayUsecs(int usecs) {
        return with(speedHz, check("SPI delay (µs)", usecs, 0xffff), bitsPerWord, csChange, wordDelayUsecs, txNbits,
                rxNbits);
    }

    /** Releases chip select after this transfer (see the class comment). */
    public SpiTransfer csChange(boolean change) {
        return with(speedHz, delayUsecs, bitsPerWord, change, wordDelayUsecs, txNbits, rxNbits);
    }

    /** A delay between the words of this transfer (0..255 µs; the controller must support it). */
    public SpiTransfer wordDelayUsecs(int usecs) {
        return with(speedHz, delayUsecs, bitsPerWord, csChange, check("SPI word delay (µs)", usecs, 0xff), txNbits,
                rxNbits);
    }

    /** Transmit wires for this transfer: 0 (the device's), 1, 2 (dual), 4 (quad), 8 (octal). */
    public SpiTransfer txNbits(int n) {
        return with(speedHz, delayUsecs, bitsPerWord, csChange, wordDelayUsecs, nbits("SPI tx_nbits", n), rxNbits);
    }

    /** Receive wires for this transfer: 0 (the device's), 1, 2, 4, 8. */
    public SpiTransfer rxNbits(int n) {
        return with(speedHz, delayUsecs, bitsPerWord, csChange, wordDelayUsecs, txNbits, nbits("SPI rx_nbits", n));
    }

    /** The number of bytes. */
    public int length() {
        return length;
    }

    /** Whether the transfer sends data of its own. */
    public boolean sends() {
        return tx;
    }

    /** Whether the transfer keeps what it receives. */
    public boolean receives() {
        return rx;
    }

    /** Whether a send side goes through the staging buffer (an array or a heap segment). */
    boolean txStaged() {
        return tx && (txSegment == null ? txArray != null : !txSegment.isNative());
    }

    /** Whether a receive side goes through the staging buffer (an array, a heap segment, or none: dropped). */
    boolean rxStaged() {
        return rx && (rxSegment == null || !rxSegment.isNative());
    }

    /** E.g. {@code "SpiTransfer[3 bytes tx rx speed=500000 cs_change]"}. */
    @Override
    public String toString() {
        return "SpiTransfer[" + length + " bytes" + (tx ? " tx" : "") + (rx ? " rx" : "")
                + (speedHz != 0 ? " speed=" + speedHz : "") + (bitsPerWord != 0 ? " bpw=" + bitsPerWord : "")
                + (delayUsecs != 0 ? " delay=" + delayUsecs + "us" : "") + (csChange ? " cs_change" : "")
                + (wordDelayUsecs != 0 ? " word_delay=" + wordDelayUsecs + "us" : "")
                + (txNbits != 0 ? " tx_nbits=" + txNbits : "") + (rxNbits != 0 ? " rx_nbits=" + rxNbits : "") + "]";
    }
}
