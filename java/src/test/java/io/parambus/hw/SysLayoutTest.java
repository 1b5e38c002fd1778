package io.parambus.hw;

import io.parambus.internal.Native;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The epoll, poll and eventfd structs and flags Native declares are the C library's. */
class SysLayoutTest {
    @Test
    void epollPollEventfdAreTheCLibrarys() throws Exception {
        UapiLayouts.assertSame("sys", Map.of(
                "epoll_event_size", Native.EPOLL_EVENT_SIZE,
                "epoll_event_data", Native.EPOLL_EVENT_DATA,
                "pollfd_size", Native.POLLFD_SIZE,
                "pollfd_revents", Native.POLLFD_REVENTS,
                "EPOLL_CLOEXEC", (long) Native.EPOLL_CLOEXEC,
                "EFD_CLOEXEC", (long) Native.EFD_CLOEXEC,
                "EFD_NONBLOCK", (long) Native.EFD_NONBLOCK));
    }
}
