package io.parambus;

/**
 * Every error of parambus for Java: a one-line message that names the operation,
 * the object (an instance, a parameter, a file) and the problem, and the errno
 * name the C library would return for it ({@code EPROTO}, {@code EPERM},
 * {@code ESTALE} …; {@link #errno()}), so that programs in both languages can
 * react alike. Subclasses narrow down what can be handled.
 */
public class ParambusException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String errno;

    /** An error with the errno name of its C equivalent (e.g. {@code "EPROTO"}). */
    public ParambusException(String errno, String message) {
        super(message);
        this.errno = errno;
    }

    /** An error with the errno name of its C equivalent and its cause. */
    public ParambusException(String errno, String message, Throwable cause) {
        super(message, cause);
        this.errno = errno;
    }

    /** The errno name of the C library's equivalent error, e.g. {@code "ESTALE"}. */
    public String errno() {
        return errno;
    }
}
