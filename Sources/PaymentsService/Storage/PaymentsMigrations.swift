/// The versioned schema of PaymentsService's own database. Applied in order
/// at start-up (or by `PaymentsService migrate`); an applied migration is
/// never edited, only followed by a new one.
enum PaymentsMigrations {
    static let all: [(version: Int, name: String, sql: String)] = [
        (
            1, "apple_iap_transactions",
            """
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
            """
        ),
        (
            2, "apple_notifications",
            """
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
            """
        ),
        (
            3, "app_account_tokens",
            """
            CREATE TABLE app_account_tokens (
                user_id    uuid PRIMARY KEY,
                token      uuid NOT NULL UNIQUE,
                created_at timestamptz NOT NULL DEFAULT now()
            );
            """
        ),
        // The lifecycle model (PurchaseLifecycle): Apple's verdict with its
        // signed date and terms, the grant's progress and the clawback cycle
        // in force; status and pending_action become views of them. Rows
        // written before are carried over from (status, pending_action, revoked).
        (
            4, "purchase_lifecycle",
            """
            ALTER TABLE apple_iap_transactions
                ADD COLUMN quantity integer NOT NULL DEFAULT 1 CHECK (quantity BETWEEN 1 AND 10),
                ADD COLUMN claimed boolean NOT NULL DEFAULT true,
                ADD COLUMN verdict_signed_at timestamptz,
                ADD COLUMN revocation_type varchar(32),
                ADD COLUMN revocation_percentage integer CHECK (revocation_percentage BETWEEN 0 AND 100000),
                ADD COLUMN grant_state varchar(16) NOT NULL DEFAULT 'not_owed'
                    CHECK (grant_state IN ('not_owed', 'owed', 'applied', 'refused')),
                ADD COLUMN clawback_cycle integer NOT NULL DEFAULT 0 CHECK (clawback_cycle >= 0),
                ADD COLUMN cycle_phase varchar(16) CHECK (cycle_phase IN ('clawback_owed', 'clawed_back', 'reversal_owed', 'reversed')),
                ADD COLUMN cycle_amount bigint NOT NULL DEFAULT 0 CHECK (cycle_amount >= 0),
                ADD COLUMN cycle_reason varchar(64),
                ADD COLUMN cycle_deducted bigint NOT NULL DEFAULT 0 CHECK (cycle_deducted >= 0);
            UPDATE apple_iap_transactions SET
                claimed = (email_hash IS NOT NULL),
                grant_state = CASE
                    WHEN status IN ('granted', 'refunded', 'refunded_insufficient') THEN 'applied'
                    WHEN status = 'failed' THEN 'refused'
                    WHEN pending_action = 'grant' OR status IN ('verified', 'received') THEN 'owed'
                    WHEN ledger_event_id IS NOT NULL THEN 'applied'
                    ELSE 'not_owed' END,
                clawback_cycle = CASE
                    WHEN status IN ('refunded', 'refunded_insufficient') OR pending_action IN ('clawback', 'reverse_clawback') THEN 1
                    ELSE 0 END,
                cycle_phase = CASE
                    WHEN pending_action = 'reverse_clawback' THEN 'reversal_owed'
                    WHEN status IN ('refunded', 'refunded_insufficient') THEN 'clawed_back'
                    WHEN pending_action = 'clawback' THEN 'clawback_owed'
                    ELSE NULL END,
                cycle_amount = CASE
                    WHEN status IN ('refunded', 'refunded_insufficient') OR pending_action IN ('clawback', 'reverse_clawback') THEN credits
                    ELSE 0 END,
                cycle_reason = CASE
                    WHEN status IN ('refunded', 'refunded_insufficient') OR pending_action IN ('clawback', 'reverse_clawback')
                    THEN coalesce(revocation_reason, '') ELSE NULL END,
                cycle_deducted = CASE
                    WHEN status IN ('refunded', 'refunded_insufficient') THEN credits - overdue_amount ELSE 0 END;
            -- A row known only from Apple's notifications may lack an owner and a product.
            DO $$
            DECLARE c record;
            BEGIN
                FOR c IN SELECT conname FROM pg_constraint
                         WHERE conrelid = 'apple_iap_transactions'::regclass AND contype = 'c'
                           AND (pg_get_constraintdef(oid) LIKE '%user_id IS NOT NULL%'
                                OR pg_get_constraintdef(oid) LIKE '%product_code IS NOT NULL%')
                LOOP
                    EXECUTE format('ALTER TABLE apple_iap_transactions DROP CONSTRAINT %I', c.conname);
                END LOOP;
            END $$;
            ALTER TABLE apple_iap_transactions
                ADD CONSTRAINT apple_iap_transactions_claimed_owner CHECK (NOT claimed OR (user_id IS NOT NULL AND product_code IS NOT NULL)),
                ADD CONSTRAINT apple_iap_transactions_cycle_phase CHECK ((clawback_cycle = 0) = (cycle_phase IS NULL)),
                ADD CONSTRAINT apple_iap_transactions_grant_owed_claimed CHECK (grant_state = 'not_owed' OR claimed);
            """
        ),
        // The jobs that ask Apple (App Store Server API): one row per job,
        // holding its lease (one instance runs a job at a time), its
        // schedule and where it resumes; and when reconciliation last asked
        // Apple about a row, so a stuck row is asked again only after a while.
        (
            5, "apple_sync_jobs",
            """
            CREATE TABLE apple_sync_jobs (
                job                  varchar(64) PRIMARY KEY,
                lease_owner          varchar(64),
                lease_until          timestamptz,
                next_run_at          timestamptz NOT NULL DEFAULT now(),
                -- Notification recovery: every notification first sent before
                -- this point (UNIX ms) has been fed through the notification path.
                resume_ms            bigint,
                -- A notification history window in progress and the page to continue from.
                window_start_ms      bigint,
                window_end_ms        bigint,
                window_only_failures boolean NOT NULL DEFAULT false,
                page_token           text,
                -- The revoked sweep in progress: the last user visited.
                cursor               text,
                last_run_at          timestamptz,
                last_outcome         varchar(64),
                updated_at           timestamptz NOT NULL DEFAULT now(),
                CHECK ((lease_owner IS NULL) = (lease_until IS NULL)),
                CHECK ((window_start_ms IS NULL) = (window_end_ms IS NULL)),
                CHECK (page_token IS NULL OR window_start_ms IS NOT NULL)
            );
            -- Since when the step in force has been owed (retries do not move
            -- it, unlike updated_at): how long a row has been stuck.
            ALTER TABLE apple_iap_transactions ADD COLUMN apple_checked_at timestamptz, ADD COLUMN owed_since timestamptz;
            UPDATE apple_iap_transactions SET owed_since = updated_at WHERE pending_action IS NOT NULL;
            CREATE INDEX apple_iap_transactions_reconcile ON apple_iap_transactions (apple_checked_at NULLS FIRST)
                WHERE pending_action IS NOT NULL OR status = 'received';
            CREATE INDEX apple_iap_transactions_credited ON apple_iap_transactions (user_id, environment, purchase_date DESC)
                WHERE grant_state = 'applied';
            """
        ),
        // Apple's CONSUMPTION_REQUEST: each user's consent to share
        // consumption data, and one answer per request (by notification
        // uuid, so a redelivery sends nothing twice), with what was sent,
        // Apple's answer and when; pending ones are retried within Apple's
        // 12 hours (deadline).
        (
            6, "consumption_answers",
            """
            CREATE TABLE consumption_consents (
                user_id    uuid PRIMARY KEY,
                consented  boolean NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE TABLE consumption_answers (
                notification_uuid uuid PRIMARY KEY,
                transaction_id    varchar(64) NOT NULL,
                environment       varchar(16) NOT NULL,
                status            varchar(16) NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'sent', 'skipped', 'failed', 'expired')),
                deadline          timestamptz NOT NULL,
                next_attempt_at   timestamptz NOT NULL DEFAULT now(),
                lease_until       timestamptz,
                attempts          integer NOT NULL DEFAULT 0,
                body              jsonb,
                apple_status      integer,
                detail            text,
                created_at        timestamptz NOT NULL DEFAULT now(),
                sent_at           timestamptz,
                CHECK ((status = 'sent') = (sent_at IS NOT NULL))
            );
            CREATE INDEX consumption_answers_due ON consumption_answers (next_attempt_at) WHERE status = 'pending';
            """
        ),
        // The rules on one column become domain types that carry them as
        // named constraints (docs/PERFORMANCE.md, "CHECK constraints as
        // domains"): the same rules, checked only where a statement writes
        // the column, without PostgreSQL rebuilding them per statement.
        (
            7, "check_domains",
            """
            -- PostgreSQL 15 rebuilds every CHECK of a table from its stored text
            -- (parse, plan, set up) on each INSERT and UPDATE statement, even for
            -- columns the statement leaves alone; a domain's constraints are
            -- planned once per connection (its type cache) and checked only for
            -- the columns a statement assigns. Rules that tie columns together
            -- stay table CHECKs. So do environment, status, pending_action and
            -- grant_state here, and consumption_answers.status: a partial index
            -- uses each of them, and PostgreSQL rebuilds a partial index whenever
            -- one of its columns changes type, even to a domain of that type.
            -- Nothing is rewritten: each domain has its column's type and no
            -- constraint yet when the column moves to it, in the statement that
            -- drops the old CHECK (so neither the table nor an index is
            -- rebuilt); then each domain gets its constraint, which checks the
            -- stored rows (one scan per domain, under the lock ALTER TABLE holds
            -- until commit).
            CREATE DOMAIN credit_amount AS bigint;
            CREATE DOMAIN purchase_quantity AS integer;
            CREATE DOMAIN revocation_milli_percent AS integer;
            CREATE DOMAIN clawback_cycle_number AS integer;
            CREATE DOMAIN clawback_cycle_phase AS varchar(16);
            ALTER TABLE apple_iap_transactions
                DROP CONSTRAINT apple_iap_transactions_credits_check,
                DROP CONSTRAINT apple_iap_transactions_overdue_amount_check,
                DROP CONSTRAINT apple_iap_transactions_cycle_amount_check,
                DROP CONSTRAINT apple_iap_transactions_cycle_deducted_check,
                DROP CONSTRAINT apple_iap_transactions_quantity_check,
                DROP CONSTRAINT apple_iap_transactions_revocation_percentage_check,
                DROP CONSTRAINT apple_iap_transactions_clawback_cycle_check,
                DROP CONSTRAINT apple_iap_transactions_cycle_phase_check,
                ALTER COLUMN credits TYPE credit_amount,
                ALTER COLUMN overdue_amount TYPE credit_amount,
                ALTER COLUMN cycle_amount TYPE credit_amount,
                ALTER COLUMN cycle_deducted TYPE credit_amount,
                ALTER COLUMN quantity TYPE purchase_quantity,
                ALTER COLUMN revocation_percentage TYPE revocation_milli_percent,
                ALTER COLUMN clawback_cycle TYPE clawback_cycle_number,
                ALTER COLUMN cycle_phase TYPE clawback_cycle_phase;
            -- Credits granted, clawed back, deducted or still owed: never negative.
            ALTER DOMAIN credit_amount ADD CONSTRAINT credit_amount_not_negative CHECK (VALUE >= 0);
            -- Apple's quantity of one transaction: 1 to 10.
            ALTER DOMAIN purchase_quantity ADD CONSTRAINT purchase_quantity_in_range CHECK (VALUE BETWEEN 1 AND 10);
            -- Apple's revocationPercentage, in thousandths of a percent.
            ALTER DOMAIN revocation_milli_percent ADD CONSTRAINT revocation_milli_percent_in_range CHECK (VALUE BETWEEN 0 AND 100000);
            -- Which refund cycle is in force (0: none yet).
            ALTER DOMAIN clawback_cycle_number ADD CONSTRAINT clawback_cycle_number_not_negative CHECK (VALUE >= 0);
            ALTER DOMAIN clawback_cycle_phase ADD CONSTRAINT clawback_cycle_phase_known
                CHECK (VALUE IN ('clawback_owed', 'clawed_back', 'reversal_owed', 'reversed'));
            """
        ),
        // Apple's JWS is base64url text (3–5 KB, so TOASTed): pglz, the
        // default, tries to compress it on every insert and gives up (it
        // wants 25 % and gets about 10 %), so it is stored as it came after
        // costing the attempt. lz4 takes the 10 % (a real Apple JWS: 5,079 to
        // 4,486 bytes) for less CPU than pglz's failed attempt
        // (docs/PERFORMANCE.md, "Session 7: the JWS column compressed with
        // lz4"). Catalog only: stored values keep their form until rewritten.
        // A server without lz4 (built without it, or before PostgreSQL 14,
        // which has no per-column compression) keeps pglz: the migration
        // still applies, so the services start on it as before.
        (
            8, "signed_transaction_lz4",
            """
            DO $$
            BEGIN
                IF current_setting('server_version_num')::integer >= 140000
                   AND (SELECT 'lz4' = ANY (enumvals) FROM pg_settings WHERE name = 'default_toast_compression') THEN
                    ALTER TABLE apple_iap_transactions ALTER COLUMN signed_transaction_info SET COMPRESSION lz4;
                END IF;
            END
            $$;
            """
        ),
        // The purchase row's nine rules as one CHECK calling
        // apple_iap_transactions_rules (docs/PERFORMANCE.md, "The rules in
        // one function"): PostgreSQL rebuilds every table CHECK from its
        // stored node tree on each INSERT and UPDATE statement (about 9 KB of
        // text to parse and plan for these nine, on every step of the saga),
        // where a plpgsql function is compiled once per connection. The
        // function refuses what the nine refused, in their order (by name, as
        // PostgreSQL checks them), as a check_violation naming the same
        // constraint; a rule whose result is NULL passes, as a CHECK's does.
        // NOT VALID: the stored rows passed these same rules under the nine
        // constraints dropped in this statement, so nothing is scanned under
        // the table's lock; new and updated rows are checked at once
        // (`VALIDATE CONSTRAINT` proves the old rows again without blocking
        // writes: docs/OPERATIONS.md).
        (
            9, "purchase_rules_function",
            """
            CREATE FUNCTION apple_iap_transactions_rules(p_status text, p_grant_state text, p_pending_action text,
                                                         p_next_attempt_at timestamptz, p_ledger_event_id text, p_claimed boolean,
                                                         p_user_id uuid, p_product_code text, p_clawback_cycle integer,
                                                         p_cycle_phase text, p_environment text)
            RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
            DECLARE
                v_broken text;
            BEGIN
                IF (p_pending_action IS NULL OR p_next_attempt_at IS NOT NULL) IS FALSE THEN
                    v_broken := 'apple_iap_transactions_check2';
                ELSIF (p_status <> 'granted' OR p_ledger_event_id IS NOT NULL) IS FALSE THEN
                    v_broken := 'apple_iap_transactions_check3';
                ELSIF (NOT p_claimed OR (p_user_id IS NOT NULL AND p_product_code IS NOT NULL)) IS FALSE THEN
                    v_broken := 'apple_iap_transactions_claimed_owner';
                ELSIF ((p_clawback_cycle = 0) = (p_cycle_phase IS NULL)) IS FALSE THEN
                    v_broken := 'apple_iap_transactions_cycle_phase';
                ELSIF (p_environment IN ('Sandbox', 'Production', 'Xcode', 'LocalTesting')) IS FALSE THEN
                    v_broken := 'apple_iap_transactions_environment_check';
                ELSIF (p_grant_state = 'not_owed' OR p_claimed) IS FALSE THEN
                    v_broken := 'apple_iap_transactions_grant_owed_claimed';
                ELSIF (p_grant_state IN ('not_owed', 'owed', 'applied', 'refused')) IS FALSE THEN
                    v_broken := 'apple_iap_transactions_grant_state_check';
                ELSIF (p_pending_action IN ('grant', 'clawback', 'reverse_clawback')) IS FALSE THEN
                    v_broken := 'apple_iap_transactions_pending_action_check';
                ELSIF (p_status IN ('received', 'verified', 'granted', 'failed', 'refunded', 'refunded_insufficient', 'revoked')) IS FALSE THEN
                    v_broken := 'apple_iap_transactions_status_check';
                END IF;
                IF v_broken IS NOT NULL THEN
                    RAISE EXCEPTION 'new row for relation "apple_iap_transactions" violates check constraint "%"', v_broken
                        USING ERRCODE = 'check_violation', CONSTRAINT = v_broken, TABLE = 'apple_iap_transactions';
                END IF;
                RETURN true;
            END
            $$;

            ALTER TABLE apple_iap_transactions
                DROP CONSTRAINT apple_iap_transactions_check2,
                DROP CONSTRAINT apple_iap_transactions_check3,
                DROP CONSTRAINT apple_iap_transactions_claimed_owner,
                DROP CONSTRAINT apple_iap_transactions_cycle_phase,
                DROP CONSTRAINT apple_iap_transactions_environment_check,
                DROP CONSTRAINT apple_iap_transactions_grant_owed_claimed,
                DROP CONSTRAINT apple_iap_transactions_grant_state_check,
                DROP CONSTRAINT apple_iap_transactions_pending_action_check,
                DROP CONSTRAINT apple_iap_transactions_status_check,
                ADD CONSTRAINT apple_iap_transactions_rules
                    CHECK (apple_iap_transactions_rules(status, grant_state, pending_action, next_attempt_at, ledger_event_id, claimed,
                                                        user_id, product_code, clawback_cycle, cycle_phase, environment)) NOT VALID;
            """
        ),
    ]
}
