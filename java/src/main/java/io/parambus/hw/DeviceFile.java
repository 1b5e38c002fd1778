package io.parambus.hw;

import io.parambus.internal.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One open device file and the native memory its calls use: the errno buffer and
 * whatever scratch structs the owner allocates from {@link #arena()} once, when it
 * is opened. A call allocates nothing.
 *
 * <p>Threads: the calls through this object are serialised by one lock (they share the
 * errno buffer and the owner's scratch structs), which is a {@link ReentrantLock}: a
 * virtual thread waiting for it unmounts. Owners hold {@link #lock()} around a call
 * and its use of their scratch memory. {@link #close()} takes the lock too, so it
 * never closes a descriptor under a running call, and every later call fails with
 * {@code EBADF} naming the device.
 *
 * <p>Ownership: the arena is shared (any thread may use the object) and closed, with
 * the descriptor, by {@link #close()}.
 */
final class DeviceFile implements AutoCloseable {
    private final String path;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment capture = arena.allocate(Native.captureLayout());
    private final ReentrantLock lock = new ReentrantLock();
    private int fd;

    private DeviceFile(String path, int fd) {
        this.path = path;
        this.fd = fd;
    }

    /** Opens path with flags ({@code O_CLOEXEC} is added); operation names the open in errors. */
    static DeviceFile open(String operation, String path, int flags) {
        try {
            return new DeviceFile(path, Native.open(path, flags | Native.O_CLOEXEC));
        } catch (Native.Errno e) {
            throw new HwException(operation, path, e.code);
        }
    }

    /** Adopts a descriptor the kernel handed out (e.g. a GPIO line request's); path names it in errors. */
    static DeviceFile adopt(String path, int fd) {
        return new DeviceFile(path, fd);
    }

    /** The device path (or description) errors name. */
    String path() {
        return path;
    }

    /** The arena of the owner's scratch memory: allocate from it when opening, never per call. */
    Arena arena() {
        return arena;
    }

    /** The lock owners hold around a call and its scratch memory. */
    ReentrantLock lock() {
        return lock;
    }

    /** The descriptor; the caller holds {@link #lock()}. Throws EBADF once closed. */
    int fd(String operation) {
        if (fd < 0) {
            throw new HwException(operation, path, 9, "closed");
        }
        return fd;
    }

    /** The descriptor for a poller, -1 once closed; the caller holds {@link #lock()}. */
    int rawFd() {
        return fd;
    }

    /** ioctl with a pointer argument; the caller holds {@link #lock()}. The result, or throws. */
    int ioctl(String operation, long request, MemorySegment arg) {
        int r = Native.ioctl(fd(operation), request, arg, capture);
        if (r < 0) {
            throw new HwException(operation, path, -r);
        }
        return r;
    }

    /** ioctl with an integer argument; the caller holds {@link #lock()}. The result, or throws. */
    int ioctl(String operation, long request, long arg) {
        int r = Native.ioctl(fd(operation), request, arg, capture);
        if (r < 0) {
            throw new HwException(operation, path, -r);
        }
        return r;
    }

    /** ioctl returning -errno instead of throwing (for the errors a caller expects); holds {@link #lock()}. */
    int ioctlOrErrno(String operation, long request, MemorySegment arg) {
        return Native.ioctl(fd(operation), request, arg, capture);
    }

    /** read(2); the caller holds {@link #lock()}. The bytes read, or -errno (EAGAIN, EINTR...). */
    long read(String operation, MemorySegment buf, long len) {
        return Native.read(fd(operation), buf, len, capture);
    }

    /** write(2); the caller holds {@link #lock()}. The bytes written, or -errno. */
    long write(String operation, MemorySegment buf, long len) {
        return Native.write(fd(operation), buf, len, capture);
    }

    /** The errno buffer, for calls an owner makes itself; the caller holds {@link #lock()}. */
    MemorySegment capture() {
        return capture;
    }

    /** Whether {@link #close()} ran. */
    boolean isClosed() {
        lock.lock();
        try {
            return fd < 0;
        } finally {
            lock.unlock();
        }
    }

    /** Closes the descriptor and frees the native memory; idempotent. */
    @Override
    public void close() {
        lock.lock();
        try {
            if (fd >= 0) {
                Native.close(fd);
                fd = -1;
                arena.close();
            }
        } finally {
            lock.unlock();
        }
    }
}
