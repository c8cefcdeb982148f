/// What the request parser yields from fed bytes, in stream order.
public enum HTTPParserEvent: Sendable, Equatable {
    /// The head just parsed carries `Expect: 100-continue` and a body not yet
    /// received: the server may send `100 Continue` now.
    case continueRequired
    /// A head just parsed announces a body (a positive Content-Length, or
    /// chunked); none of the body has been yielded. Only from a parser made
    /// with `reportsHeadsWithBody`, and before that request's
    /// `continueRequired`.
    case bodyFollows(HTTPRequestHead)
    /// A complete request.
    case request(HTTPRequest)
    /// The stream is unusable from here on: answer `error.status` and close.
    case failure(HTTPRequestError)
}
