package io.parambus;

/**
 * The instance was built from another schema than the program was compiled against
 * (docs/segment-format.md §7.2): its interface name, schema hash or parameter count
 * differs from the generated class's. Errno {@code EPROTO}, as the C bindings' generated
 * {@code *_open()} returns; the message names what differs.
 *
 * <p>Thread-safety: immutable.
 */
public final class SchemaMismatchException extends ParambusException {
    private static final long serialVersionUID = 1L;

    /** A mismatch with a one-line message naming what differs. */
    public SchemaMismatchException(String message) {
        super("EPROTO", message);
    }
}
