import B2CFastPath
import Foundation
import GRDB

/// The answers `b2c token`'s fast path serves: what the full client answered a question, by the question's hash.
extension TokenStore {
    /// How many answers are kept (the newest): questions differ by working directory, so scripts run in many places.
    static let keptAnswers = 256

    /// The store's generation: every change to an account or a current account moves it on.
    public func generation() throws -> Int { try read { try Int.fetchOne($0, sql: "SELECT n FROM store_generation") ?? 0 } }

    /// Files `answer` under `question`; an identical answer already filed is left as it is (no write).
    func fileAnswer(_ answer: TokenAnswer, for question: String) throws {
        guard let text = answer.encoded else { return }
        let filed = try read { try String.fetchOne($0, sql: "SELECT answer FROM fast_answers WHERE question = ?", arguments: [question]) }
        guard filed != text else { return }
        try write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO fast_answers(question, answer) VALUES (?, ?)", arguments: [question, text])
            try db.execute(
                sql: "DELETE FROM fast_answers WHERE rowid NOT IN (SELECT rowid FROM fast_answers ORDER BY rowid DESC LIMIT ?)",
                arguments: [Self.keptAnswers])
        }
    }
}

extension B2CClient {
    /// The store's generation now, to be given to `fileFastAnswer` after a silent token: an answer is filed only when
    /// nothing changed the store's accounts between the two (another process's switch, for one).
    public func storeGeneration() -> Int? { try? store.generation() }

    /// Files what a silent token answered `question` (a `TokenQuestion`'s key) for the fast path of `b2c token`: only a
    /// token served from the cache with nothing to tell, under a configuration read from a regular file, and only when
    /// the store's generation is still `generationBefore` (read before the token was chosen). `configurationFound`: the
    /// configuration is `./policies.json`, found in the working directory and allowed (the caller said so on stderr).
    public func fileFastAnswer(question: String, result: SilentResult, generationBefore: Int?, configurationFound: Bool = false) {
        guard result.fromCache, result.notice == nil, let digest = config.sourceDigest, let generation = generationBefore,
            (try? store.generation()) == generation
        else { return }
        // The path as given (made absolute, not resolved: a symbolic link later pointed elsewhere must change the answer),
        // and only when it leads to a regular file (a configuration read from a pipe is not there to be read again).
        let path = URL(fileURLWithPath: config.source).standardizedFileURL.path
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return }
        let answer = TokenAnswer(
            configPath: path, configHash: digest, found: configurationFound, caFile: config.caFile ?? "", generation: generation,
            environment: result.account.environment, clientID: result.account.clientID, accountID: result.account.id,
            target: result.accessToken.target, policy: result.account.policy,
            secretHash: TokenAnswer.digest(Array(result.accessToken.secret.utf8)))
        try? store.fileAnswer(answer, for: question)
    }
}
