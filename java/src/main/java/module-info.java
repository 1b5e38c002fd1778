/**
 * parambus for Java: an instance's parameter table read and written in place
 * through the FFM API ({@link io.parambus.ParamTable}), and the socket client
 * of pbusd ({@link io.parambus.client}). No JNI and no native library of the
 * project's own: the only native calls are the C library's system-call
 * wrappers, through {@link java.lang.foreign.Linker}.
 */
module io.parambus {
    requires jdk.net;

    exports io.parambus;
    exports io.parambus.client;
}
