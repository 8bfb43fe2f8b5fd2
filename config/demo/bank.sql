-- The demo's bank: accounts and their transactions (SQLite). `make demo` builds
-- data/demo/bank.db from this file, then a writer adds and settles transactions while
-- the JDBC source (timestamp+incrementing on updated_at, id) streams them to a topic.
CREATE TABLE accounts (
    id INTEGER PRIMARY KEY,
    owner TEXT NOT NULL,
    iban TEXT NOT NULL UNIQUE
);

CREATE TABLE transactions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts (id),
    amount NUMERIC(12, 2) NOT NULL,
    currency TEXT NOT NULL DEFAULT 'EUR',
    merchant TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    updated_at TIMESTAMP NOT NULL
);

INSERT INTO accounts (id, owner, iban) VALUES
    (1, 'Ada Lovelace', 'GB33BUKB20201555555555'),
    (2, 'Alan Turing', 'GB94BARC10201530093459'),
    (3, 'Grace Hopper', 'DE89370400440532013000'),
    (4, 'Edsger Dijkstra', 'NL91ABNA0417164300'),
    (5, 'Barbara Liskov', 'FR1420041010050500013M02606');

INSERT INTO transactions (account_id, amount, merchant, status, updated_at) VALUES
    (1, 12.50, 'Corner Bakery', 'settled', '2026-11-20 08:01:12.000000'),
    (2, 1840.00, 'Rent', 'settled', '2026-11-20 08:15:40.000000'),
    (3, 64.99, 'Bookshop', 'settled', '2026-11-20 09:02:03.000000'),
    (4, 3.20, 'Coffee', 'settled', '2026-11-20 09:02:03.000000'),
    (5, 250.00, 'Electricity', 'settled', '2026-11-20 10:30:00.000000'),
    (1, 5400.00, 'Car dealer', 'pending', '2026-11-20 11:45:10.000000'),
    (2, 18.75, 'Cinema', 'settled', '2026-11-20 19:20:00.000000'),
    (3, 99.00, 'Train tickets', 'settled', '2026-11-20 21:05:33.000000');
