#if canImport(Glibc)
import Glibc
#endif

extension EventLoop {
    /// Blocks SIGPIPE on the calling loop thread. Our own writes pass
    /// MSG_NOSIGNAL, but OpenSSL writes TLS records with write(2): a peer
    /// that hangs up while a record is being written would otherwise kill
    /// the whole process (any caller, certificate or not, could stop a
    /// service). SIGPIPE is sent to the thread that wrote, so blocking it
    /// here leaves the process's disposition alone and turns the write
    /// into EPIPE, which closes just that connection. A blocked SIGPIPE
    /// stays pending on this thread and is dropped when the thread ends.
    static func blockBrokenPipeSignalOnThisThread() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        let result = pthread_sigmask(SIG_BLOCK, &set, nil)
        precondition(result == 0, "pthread_sigmask(SIG_BLOCK, SIGPIPE) failed: \(result)")
    }
}
