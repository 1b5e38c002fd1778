package io.parambus.client;

/**
 * Linux errno numbers and their names, for the codes of the socket protocol
 * (docs/socket-protocol.md §5: negative errno values) and the names that
 * {@link io.parambus.ParambusException#errno()} carries. Package-private: the
 * protocol's codes are told to users as names.
 */
final class Errno {
    static final int EPERM = 1;
    static final int ENOENT = 2;
    static final int EIO = 5;
    static final int ENOMEM = 12;
    static final int EACCES = 13;
    static final int EBUSY = 16;
    static final int EINVAL = 22;
    static final int EMFILE = 24;
    static final int ERANGE = 34;
    static final int EPROTO = 71;
    static final int EUSERS = 87;
    static final int EMSGSIZE = 90;
    static final int EPROTONOSUPPORT = 93;
    static final int EADDRINUSE = 98;
    static final int ESTALE = 116;

    private static final String[] NAMES = new String[134];

    static {
        name(1, "EPERM"); name(2, "ENOENT"); name(5, "EIO"); name(11, "EAGAIN"); name(12, "ENOMEM");
        name(13, "EACCES"); name(16, "EBUSY"); name(22, "EINVAL"); name(24, "EMFILE"); name(32, "EPIPE");
        name(34, "ERANGE"); name(36, "ENAMETOOLONG"); name(71, "EPROTO"); name(75, "EOVERFLOW");
        name(87, "EUSERS"); name(90, "EMSGSIZE"); name(93, "EPROTONOSUPPORT"); name(98, "EADDRINUSE");
        name(104, "ECONNRESET"); name(105, "ENOBUFS"); name(107, "ENOTCONN"); name(110, "ETIMEDOUT");
        name(111, "ECONNREFUSED"); name(116, "ESTALE"); name(133, "EHWPOISON");
    }

    private Errno() {
    }

    private static void name(int number, String name) {
        NAMES[number] = name;
    }

    /**
     * The name of a protocol code (a negative errno, or a positive one): {@code -22}
     * is {@code "EINVAL"}; a number without a name here is {@code "errno N"}.
     */
    static String name(int code) {
        long n = Math.abs((long) code); // a server may send any i32, Integer.MIN_VALUE too
        return n < NAMES.length && NAMES[(int) n] != null ? NAMES[(int) n] : "errno " + n;
    }
}
