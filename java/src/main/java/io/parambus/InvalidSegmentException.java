package io.parambus;

/**
 * A value segment that fails one of the checks of docs/segment-format.md §7 (errno
 * {@code EPROTO}, as the C library's {@code pbus_table_open()} returns). {@link #check()}
 * is the check's name as §7 and {@code tests/vectors/segment-bad.expected} spell it
 * ({@code magic}, {@code region-inside}, {@code slot-size} …); the message names the
 * instance, the check and what is wrong. Nothing stays mapped.
 *
 * <p>Thread-safety: immutable.
 */
public final class InvalidSegmentException extends ParambusException {
    private static final long serialVersionUID = 1L;

    private final String check;

    /** A refusal by the check {@code check}, with a one-line message. */
    public InvalidSegmentException(String check, String message) {
        super("EPROTO", message);
        this.check = check;
    }

    /** The name of the check of §7 that refused the segment, e.g. {@code "region-aligned"}. */
    public String check() {
        return check;
    }
}
