/**
 * parambus for Java: an instance's parameter table read and written in place
 * through the FFM API ({@link io.parambus.ParamTable}), and the socket client
 * of pbusd ({@link io.parambus.client}). No JNI and no native library of the
 * project's own: the only native calls are the C library's system-call
 * wrappers, through {@link java.lang.foreign.Linker}. {@link io.parambus.hw}
 * drives GPIO, I2C, SPI, PWM and UART through the kernel's own interfaces the
 * same way.
 */
module io.parambus {
    requires jdk.net;

    exports io.parambus;
    exports io.parambus.client;
    exports io.parambus.hw;
}
