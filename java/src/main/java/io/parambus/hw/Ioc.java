package io.parambus.hw;

/**
 * The kernel's ioctl request numbers ({@code _IO}, {@code _IOR}, {@code _IOW},
 * {@code _IOWR} of {@code asm-generic/ioctl.h}: 8 bits number, 8 bits type, 14 bits
 * size, 2 bits direction; the layout of x86-64, arm64 and riscv64, the architectures
 * the binding runs on). Every uAPI struct's size comes from its declared layout.
 */
final class Ioc {
    private Ioc() {
    }

    private static final int NONE = 0, WRITE = 1, READ = 2;

    private static long ioc(int dir, int type, int nr, long size) {
        if (size < 0 || size >= (1 << 14)) {
            throw new IllegalArgumentException("ioctl argument size " + size + " does not fit in 14 bits");
        }
        return ((long) dir << 30) | (size << 16) | ((long) type << 8) | nr;
    }

    static long io(int type, int nr) {
        return ioc(NONE, type, nr, 0);
    }

    static long ior(int type, int nr, long size) {
        return ioc(READ, type, nr, size);
    }

    static long iow(int type, int nr, long size) {
        return ioc(WRITE, type, nr, size);
    }

    static long iowr(int type, int nr, long size) {
        return ioc(READ | WRITE, type, nr, size);
    }
}
