/// The versioned schema of PaymentsService's own database. Applied in order
/// at start-up (or by `PaymentsService migrate`); an applied migration is
/// never edited, only followed by a new one.
enum PaymentsMigrations {
    static let all: [(version: Int, name: String, sql: String)] = [
        (1, "apple_iap_transactions", """
        CREATE TABLE apple_iap_transactions (
            id                      uuid PRIMARY KEY,
            -- NULL only for a refund/revoke of a transaction never verified here
            -- whose owner could not be resolved.
            user_id                 uuid,
            product_code            varchar(64),
            app_store_product_id    varchar(255) NOT NULL,
            transaction_id          varchar(64) NOT NULL UNIQUE,
            original_transaction_id varchar(64),
            web_order_line_item_id  varchar(64),
            environment             varchar(16) NOT NULL
                CHECK (environment IN ('Sandbox', 'Production', 'Xcode', 'LocalTesting')),
            bundle_id               varchar(255) NOT NULL,
            app_account_token       uuid,
            purchase_date           timestamptz NOT NULL,
            revocation_date         timestamptz,
            revocation_reason       varchar(64),
            status                  varchar(32) NOT NULL
                CHECK (status IN ('received', 'verified', 'granted', 'failed', 'refunded', 'refunded_insufficient', 'revoked')),
            credits                 bigint NOT NULL CHECK (credits >= 0),
            currency                varchar(8),
            price_milliunits        bigint,
            ledger_event_id         varchar(200) UNIQUE,
            signed_transaction_info text NOT NULL,
            apple_payload           jsonb NOT NULL DEFAULT '{}',
            failure_code            varchar(64),
            overdue_amount          bigint NOT NULL DEFAULT 0 CHECK (overdue_amount >= 0),
            -- What the saga needs to resume after a crash.
            email_hash              varchar(128),
            email_masked            varchar(320),
            revoked                 boolean NOT NULL DEFAULT false,
            pending_action          varchar(32) CHECK (pending_action IN ('grant', 'clawback', 'reverse_clawback')),
            attempt_count           integer NOT NULL DEFAULT 0,
            next_attempt_at         timestamptz,
            last_error              text,
            created_at              timestamptz NOT NULL DEFAULT now(),
            updated_at              timestamptz NOT NULL DEFAULT now(),
            CHECK (user_id IS NOT NULL OR status = 'revoked'),
            CHECK (product_code IS NOT NULL OR status = 'revoked'),
            CHECK (pending_action IS NULL OR next_attempt_at IS NOT NULL),
            CHECK (status <> 'granted' OR ledger_event_id IS NOT NULL)
        );
        CREATE INDEX apple_iap_transactions_user_created ON apple_iap_transactions (user_id, created_at DESC);
        CREATE INDEX apple_iap_transactions_status_updated ON apple_iap_transactions (status, updated_at);
        CREATE INDEX apple_iap_transactions_pending ON apple_iap_transactions (next_attempt_at)
            WHERE pending_action IS NOT NULL;
        """),
        (2, "apple_notifications", """
        CREATE TABLE apple_notifications (
            notification_uuid uuid PRIMARY KEY,
            notification_type varchar(64) NOT NULL,
            subtype           varchar(64),
            environment       varchar(16),
            transaction_id    varchar(64),
            signed_date       timestamptz,
            -- The decoded payload (never the JWS itself).
            payload           jsonb NOT NULL DEFAULT '{}',
            outcome           varchar(64) NOT NULL,
            received_at       timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX apple_notifications_transaction ON apple_notifications (transaction_id);
        CREATE INDEX apple_notifications_type_received ON apple_notifications (notification_type, received_at);
        """),
        (3, "app_account_tokens", """
        CREATE TABLE app_account_tokens (
            user_id    uuid PRIMARY KEY,
            token      uuid NOT NULL UNIQUE,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        """),
    ]
}
