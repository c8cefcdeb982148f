/// What the user (or the app on their behalf) should do about an error.
public enum RecoveryAdvice: String, Sendable, Hashable, CaseIterable {
    /// A later attempt can succeed (the library resubmits kept purchases itself).
    case retryLater
    /// Nothing the app can do will change the answer; a person must look at it.
    case contactSupport
    /// The answer is final and needs no action (e.g. Apple refunded the purchase).
    case nothingToDo
}
