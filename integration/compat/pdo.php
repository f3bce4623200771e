<?php
// PHP PDO_MYSQL: emulated and native (server-side) prepares,
// lastInsertId(), a persistent connection.
require __DIR__ . '/common.php';
echo "version: PHP " . PHP_VERSION . " pdo_mysql " . (new ReflectionExtension('pdo_mysql'))->getVersion() . "\n";
$prev = 0;
foreach ([true, false] as $emulate) {
    $pdo = new PDO("mysql:host=$host;port=$port;charset=utf8mb4", $user, $pass, [
        PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
        PDO::ATTR_EMULATE_PREPARES => $emulate,
        PDO::ATTR_PERSISTENT => !$emulate,
    ]);
    $pdo->exec("CREATE DATABASE IF NOT EXISTS $db");
    $pdo->exec("USE $db");
    $pdo->exec($ddl);
    $mode = $emulate ? 'emulated' : 'native';
    $pdo->exec("REPLACE INTO $table (stub) VALUES ('a')");
    check_id("$mode exec", $pdo->lastInsertId(), $pdo->query("SELECT LAST_INSERT_ID()")->fetchColumn(), $prev);
    $st = $pdo->prepare("REPLACE INTO $table (stub) VALUES (?)");
    for ($i = 0; $i < 2; $i++) {
        $st->execute(['a']);
        $id = $pdo->lastInsertId(); // before the next statement replaces it
        $q = $pdo->prepare("SELECT LAST_INSERT_ID()");
        $q->execute();
        check_id("$mode prepared", $id, $q->fetchColumn(), $prev);
    }
    $q = $pdo->prepare("SELECT id, stub FROM $table WHERE stub = :stub");
    $q->execute([':stub' => 'a']);
    $row = $q->fetch(PDO::FETCH_ASSOC);
    if ((int) $row['id'] !== $prev) fail("$mode SELECT row: " . json_encode($row));
    if ($pdo->getAttribute(PDO::ATTR_AUTOCOMMIT) != 1) fail("autocommit off");
}
try {
    new PDO("mysql:host=$host;port=$port", $user, 'wrong', [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
    fail("wrong password accepted");
} catch (PDOException $e) {
    if (strpos($e->getMessage(), '1045') === false) fail("wrong password: " . $e->getMessage());
}
echo "ok\n";
