/// Something waiting for one readiness event of a descriptor armed with
/// `EventLoop.armOnce`. A class, not a protocol, so the loop calls it without
/// a dynamic cast per event; subclasses override `descriptorBecameReady`.
open class OneShotWaiter {
    public init() {}

    /// The epoll readiness bits; runs on the loop thread, once per arming.
    open func descriptorBecameReady(_ events: UInt32) {
        preconditionFailure("subclasses override descriptorBecameReady")
    }
}
