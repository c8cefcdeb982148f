import HTTPServer

/// Bodies must be declared as JSON: `application/json`, optionally with
/// `charset=utf-8` (any other charset is refused; JSON is UTF-8 only).
public enum ContentTypeRule {
    /// Throws UNSUPPORTED_MEDIA_TYPE unless the request declares JSON.
    public static func requireJSON(_ headers: HTTPHeaders) throws(Problem) {
        let values = headers.values("content-type")
        guard values.count == 1 else {
            throw Problem(.unsupportedMediaType, detail: "Send exactly one Content-Type: application/json.")
        }
        let parameters = values[0].split(separator: ";").map { $0.trimmingOWS.lowercasedASCII }
        guard parameters.first == "application/json" else {
            throw Problem(.unsupportedMediaType, detail: "Send Content-Type: application/json.")
        }
        for parameter in parameters.dropFirst() {
            let compact = parameter.filter { $0 != " " && $0 != "\t" }
            guard compact == "charset=utf-8" || compact == "charset=\"utf-8\"" else {
                throw Problem(.unsupportedMediaType, detail: "Only UTF-8 JSON is accepted.")
            }
        }
    }
}
