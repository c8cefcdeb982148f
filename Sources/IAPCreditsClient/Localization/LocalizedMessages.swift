/// The user-facing texts in English and Simplified Chinese. Purchase-related
/// texts say whether the purchase is kept (it always is unless Apple took
/// it back), so a user is never told to buy again.
public enum LocalizedMessages {
    public static func text(for key: MessageKey, in language: MessageLanguage) -> String {
        let pair = texts(for: key)
        return language == .english ? pair.english : pair.chinese
    }

    private typealias Pair = (english: String, chinese: String)

    private static let appAndGatewayDisagree: Pair = (
        "The app could not talk to our service correctly. Your purchase is kept. Please update the app or contact support.",
        "应用与服务通信异常。您的购买已保留，请更新应用或联系客服。"
    )

    private static func texts(for key: MessageKey) -> Pair {
        switch key {
        case .problem(let code): return texts(for: code)
        case .offline:
            return (
                "We could not reach our service. Please check your connection. Any purchase you made is kept and will be credited automatically.",
                "无法连接服务，请检查网络。已完成的购买会被保留并自动到账。"
            )
        case .unexpectedAnswer:
            return (
                "Our service gave an unexpected answer. Any purchase you made is kept and will be retried automatically.",
                "服务返回了异常结果。已完成的购买会被保留并自动重试。"
            )
        case .notSignedIn:
            return (
                "Please sign in. Any purchase you made is kept and will be credited after you sign in.",
                "请先登录。已完成的购买会被保留，登录后自动到账。"
            )
        case .purchasePending:
            return (
                "Apple is processing this purchase (it may need approval). Credits are added once it completes.",
                "Apple 正在处理此次购买（可能需要批准），完成后积分将自动到账。"
            )
        case .purchaseCancelled:
            return ("The purchase was cancelled. You were not charged.", "购买已取消，未扣款。")
        case .purchaseFailed:
            return (
                "The purchase could not be completed. You were not charged. Please try again.",
                "购买未能完成，未扣款。请重试。"
            )
        case .purchaseUnverified:
            return (
                "Apple could not verify this purchase on this device. It is kept; please contact support.",
                "此设备无法验证该购买。购买记录已保留，请联系客服。"
            )
        case .productUnavailable:
            return ("This package is not available right now. Please try again later.", "该套餐暂不可用，请稍后再试。")
        case .purchaseInProgress:
            return ("A purchase is already in progress.", "已有一笔购买正在进行中。")
        case .awaitingCredit:
            return (
                "Your purchase is kept and will be credited automatically. Please check your balance later.",
                "您的购买已保留，积分将自动到账，请稍后查看余额。"
            )
        case .otherAccountPurchase:
            return (
                "A purchase made on this device with another account is kept for that account and credited when it signs in.",
                "此设备上另一个账号的购买已保留，将在该账号登录后到账。"
            )
        case .credited(let credits):
            return ("\(credits) credits added.", "已到账 \(credits) 积分。")
        }
    }

    private static func texts(for code: ProblemCode) -> Pair {
        switch code {
        case .paymentProductNotFound:
            return (
                "This package is not available. Your purchase is kept; please contact support if it is not credited.",
                "该套餐不可用。您的购买已保留，如积分未到账请联系客服。"
            )
        case .paymentProductMismatch:
            return (
                "This purchase does not match the package. Your purchase is kept; please contact support.",
                "此次购买与套餐不一致。您的购买已保留，请联系客服。"
            )
        case .paymentTransactionInvalid:
            return (
                "This purchase could not be verified. It is kept; please contact support.",
                "此次购买验证失败。购买记录已保留，请联系客服。"
            )
        case .paymentTransactionRevoked:
            return (
                "Apple refunded or revoked this purchase, so no credits are added.",
                "此次购买已被 Apple 退款或撤销，不会发放积分。"
            )
        case .paymentTransactionConflict:
            return (
                "This purchase belongs to another account. Please refresh your balance or contact support.",
                "此次购买已关联其他账号。请刷新余额或联系客服。"
            )
        case .paymentStarterPackIneligible:
            return (
                "The new user pack can be bought once per email. Please contact support about this purchase.",
                "每个邮箱身份只能购买一次新手包。请联系客服处理此次购买。"
            )
        case .paymentEnvironmentNotAllowed:
            return (
                "Test purchases (Sandbox or TestFlight) are not credited here. No money was taken.",
                "此处不为测试环境（Sandbox 或 TestFlight）的购买发放积分，未产生实际扣款。"
            )
        case .paymentAppleUnavailable:
            return (
                "Apple cannot be reached right now. Your purchase is kept and will be credited automatically.",
                "暂时无法连接 Apple。您的购买已保留，稍后将自动到账。"
            )
        case .paymentGrantFailed:
            return (
                "Your purchase is verified, but the credits could not be added yet. They will be added automatically.",
                "购买已验证，但积分暂未到账，稍后将自动补发。"
            )
        case .paymentReceiptInvalid:
            return (
                "Your App Store receipt could not be read. Your purchases are kept; please contact support.",
                "无法读取您的 App Store 收据。购买记录已保留，请联系客服。"
            )
        case .paymentReceiptsUnavailable:
            return (
                "Purchases from this app version cannot be checked right now. They are kept; please update the app or contact support.",
                "暂时无法核对此版本应用的购买。购买记录已保留，请更新应用或联系客服。"
            )
        case .unauthenticated:
            return (
                "Your session has expired. Please sign in again; any purchase you made is kept.",
                "登录已过期，请重新登录。已完成的购买会被保留。"
            )
        case .validationFailed, .notFound, .methodNotAllowed, .unsupportedMediaType, .payloadTooLarge, .uriTooLong,
            .headerFieldsTooLarge, .expectationFailed, .notImplemented, .httpVersionNotSupported:
            return appAndGatewayDisagree
        case .rateLimited:
            return (
                "Too many requests. Please wait a moment; any purchase you made is kept.",
                "请求过于频繁，请稍候。已完成的购买会被保留。"
            )
        case .serviceUnavailable:
            return (
                "The service is temporarily unavailable. Please try again later; any purchase you made is kept and will be credited automatically.",
                "服务暂时不可用，请稍后再试。已完成的购买会被保留并自动到账。"
            )
        case .internalError:
            return (
                "Something went wrong on our side. Please try again later; any purchase you made is kept.",
                "服务出现错误，请稍后再试。已完成的购买会被保留。"
            )
        case .requestTimeout:
            return (
                "The request took too long. Please try again; any purchase you made is kept.",
                "请求超时，请重试。已完成的购买会被保留。"
            )
        case .unrecognized:
            return (
                "Something unexpected happened. Any purchase you made is kept and will be retried later.",
                "发生未知错误。已完成的购买会被保留，稍后自动重试。"
            )
        }
    }
}
