// The page's words in English and Russian. The language is the one the person chose with the header's
// switch (kept in localStorage), else the browser's first of `navigator.languages` that the page speaks,
// else English. The Russian game terms are the seeds' (../shared/seeds, RULES.md): «козёл», «осёл»,
// «рыба», «яйца», «базар», «стучит», запомненные очки, «вышел», дубль, кость.
//
// `t(key, ...args)`: a string, or a function of the arguments (a name, a number). The static page marks
// its texts with data-i18n (textContent), data-i18n-placeholder and data-i18n-label (aria-label):
// `translatePage()` fills them. A key missing from Russian falls back to English.
const STORE = "domino-lang";
export const LANGUAGES = { en: "English", ru: "Русский" };

// Russian plural forms: 1 кость, 2 кости, 5 костей (11-14 take the third form).
export function ruPlural(n, one, few, many) {
  const ten = n % 10, hundred = n % 100;
  if (ten === 1 && hundred !== 11) return one;
  if (ten >= 2 && ten <= 4 && (hundred < 12 || hundred > 14)) return few;
  return many;
}
const enPlural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

const EN = {
  "page.title": "Domino table",
  "setup.new": "New match", "setup.variant": "Variant", "setup.players": "Players",
  "modes.others": "People on other devices:", "modes.friends": "Play with friends", "modes.lobby": "Public tables",
  "modes.board": "Leaderboard", "lang.switch": "Language",
  "status.choose": "Choose a variant and the computer players, then press New match.",
  "hand.yours": "Your hand", "scores": "Scores", "log": "What happened", "next-round": "Next round",
  "play-again": "Play again", "leave": "Leave",
  // seats and names
  you: "You", "you.lower": "you",
  seat: (n) => `Seat ${n}`,
  "seat.level": (n, level) => `Seat ${n} (${level})`,
  level: (l) => l,
  team: (n) => `Team ${n}`,
  tiles: (n) => enPlural(n, "tile"),
  players: (n) => enPlural(n, "player"),
  "chip.score": (s) => `score ${s}`, "chip.points": (s) => `${s} pts`, "chip.knocked": "knocked",
  "chip.free": "seat free",
  leads: (who, you) => (you ? "You lead" : `${who} leads`),
  wins: (who, you) => (you ? "You win" : `${who} wins`),
  // status
  "status.match-over": "The match is over.", "status.round-over": "The round is over.",
  "status.game-over": "The game is over.", "status.waiting": "Waiting.", "status.your-turn": "Your turn",
  "status.seat-turn": (who) => `${who}: your turn`, "status.hot-seat": " (hot seat)",
  "status.to-move": (who) => `${who} to move`,
  "status.wait-seat": (n) => `Waiting for someone to take seat ${n}`,
  "status.your-time": " Your time ran out.", "status.their-time": (who) => ` ${who}'s time ran out.`,
  "title.your-turn": "Your turn · ",
  // the log
  "log.played": (who, a) => `${who} played ${a}`, "log.drew": (who, tile) => `${who} drew ${tile}`,
  "log.drew-one": (who) => `${who} drew a tile`, "log.knocked": (who) => `${who} knocked`,
  "log.scored": (who, points, count) => `${who} scored ${points}`
    + (count ? ` (the open ends add up to ${count})` : ""),
  "log.round-over": (n, ending) => `Round ${n} over: ${ending}`, "log.match-over": "Match over",
  "log.dealt": (n) => `Round ${n} dealt`,
  "log.picked": (who, tile) => `${who} picked tile ${tile}`, "log.placed": (who, tile) => `${who} placed tile ${tile}`,
  "log.discarded": (who, tile) => `${who} discarded tile ${tile}`, "log.row": (tiles) => `New row: ${tiles}`,
  "log.game-over": (s) => `Game over: ${s}`, "log.dynasty-over": (s) => `Dynasty over: ${s}`,
  "log.timed-out": (who) => `${who} timed out`,
  ending: (e) => e,
  // the hand and the moves
  "hand.of": (who) => `${who}'s hand`, "hand.empty": (whose) => `${whose} is empty`,
  "action.draw": "Draw a tile", "action.pass": "Pass (knock)",
  "tile.aria": (tile, legal) => `tile ${tile}` + (legal ? ", playable" : ""),
  "choose.prompt": (tile) => `${tile} fits more than one end: tap one on the board, or a button below.`,
  "choice.on": (tile, arm, closes) => `${tile} on ${arm}${closes ? " (closing)" : ""}`,
  "choice.lead": (tile) => `${tile} (lead)`,
  "board.empty": "The table is empty", "board.tiles": (n) => `${n} tiles on the table`,
  "board.play-on": (tile, arm) => `play ${tile} on ${arm}`, "board.spinner": " (spinner)",
  "board.just-played": (who) => `, just played by ${who}`,
  "not-allowed": (text) => `Not allowed: ${text}`,
  "no-start": (text) => `Could not start the match: ${text}`, "no-next": (text) => `No next round: ${text}`,
  "no-gateway": (text) => `The gateway does not answer: ${text}`,
  // the end of a round
  "round.result": (n, ending) => `Round ${n}: ${ending}`, "round.won-by": (who) => `, won by ${who}`,
  "round.points": (list) => `. Round points: ${list}.`, "round.match-over": " The match is over.",
  // the score table
  "scores.round": (n) => `Round ${n}`, "scores.written": "Written", "scores.remembered": "Remembered",
  "scores.score": "Score", "scores.points": "Points", "scores.crowns": "Crowns",
  "scores.largest": "Largest region", "scores.dynasty": "Dynasty total",
  "scores.fish": "fish", "scores.eggs-term": "eggs", "scores.eggs": (n) => `eggs ${n}`, "scores.pot": (n) => `eggs in the pot: ${n}`,
  "scores.lost": "Lost", "scores.loser": (animal) => (animal === "goat" ? "Goat" : animal === "donkey" ? "Donkey" : "Out"),
  "scores.loses": "loses",
  animal: (a) => `the ${a}`,
  "term.written": (target, animal) => `the points that count. High is bad: the first to ${target} written points is the ${animal} and loses.`,
  "term.remembered": (th) => `a round below ${th} points is remembered, not written, until a round of ${th} or more `
    + "writes it together with them; going out before that forgets them.",
  "term.fish": "the round ended blocked: nobody could play.",
  "term.eggs": "a fish with a tie for the highest hand: its points wait in the pot for the next round's highest hand.",
  "term.bykovo": (limit) => `the pips left in hand, 0 for the round's winner. High is bad: at ${limit} a seat is out.`,
  "term.bykovo-fish": "the round ended blocked with both ends on one number.",
  "term.block": "the lightest hand scores the pips of the others. High is good.",
  "term.score": (target) => `points scored in play and for the lightest hand. High is good: the first to ${target} wins.`,
  "closest.none": (what) => `Closest to ${what}: nobody has written points yet.`,
  "closest.some": (what, names, top, limit) => `Closest to ${what}: ${names} (${top} of ${limit}).`,
  "closest.out": "being out",
  // Kingdomino
  "kd.place": (tile) => `Place tile ${tile}: tap its first square in your kingdom, then the second`,
  "kd.pick": "Pick a tile of the next row", "kd.nowhere": "The tile fits nowhere in your kingdom: ",
  "kd.discard": (tile) => `Discard tile ${tile}`, "kd.to-place": "To place", "kd.next-row": "Next row",
  "kd.over": (result, by) => `Game over: ${result} (decided by ${by}).`,
  "kd.share": (names) => `${names} share the win`, "kd.and": " and ",
  "kd.nothing": "Nothing to place now.",
  terrain: (t) => t, "kd.crown": "crown: a region scores squares × crowns", "kd.castle": "castle",
  // tables (play with friends), ratings
  "table.you-are": (name, n) => `${name}: you are seat ${n}`,
  "rating.new": "rating: new", "rating.of": (r) => `rating ${r}`,
  "you.lower-self": "you", "seats.bot": (level) => `bot (${level})`, "seats.you": " (you)", "seats.free": "free",
  // the screens to play with friends, the lobby, the leaderboard (index.html)
  "f.your-tables": "Your tables",
  "f.open": "Open a table",
  "f.seats": "Seats",
  "f.target": "Points to end the match",
  "f.table-name": "Table name",
  "f.optional": "optional",
  "f.on-leave": "When someone leaves",
  "f.wait": "the match waits for a new person",
  "f.bot": "a greedy bot plays the seat",
  "f.clock": "Clock",
  "f.none": "none",
  "f.clock.move:10": "10 s a move",
  "f.clock.move:30": "30 s a move",
  "f.clock.move:60": "1 min a move",
  "f.clock.bank:180:2": "3 min a match + 2 s a move",
  "f.clock.bank:300:5": "5 min a match + 5 s a move",
  "f.clock.bank:600:10": "10 min a match + 10 s a move",
  "f.on-timeout": "When a clock runs out",
  "f.rule": "the variant's timeout rule: that seat loses",
  "f.auto-greedy": "a greedy bot plays on until the person is back",
  "f.auto-expert": "an expert bot plays on until the person is back",
  "f.public": "Public: listed in the lobby, anyone may sit",
  "f.open-button": "Open the table",
  "f.any": "any",
  "f.more-tables": "More tables",
  "f.take-seat": "Take my seat",
  "f.leave-table": "Leave the table",
  "f.by": "By",
  "f.by-skill": "skill rating",
  "f.by-points": "the source's rating points (Kozel)",
  "f.more-players": "More players",
  "s.open": "Open a table: choose the seats for people and for the computer, then send each person their invite link.",
  "s.name-first": "Give your name first: the other players see it.",
  "j.invalid-invite": "This invite link does not open a seat: its code is unknown or was used already. Ask whoever opened the table for a new link.",
  "j.invite-required": "This table is private: a seat there is taken with an invite link only.",
  "j.seat-taken": "Somebody took that seat a moment before you: choose another one.",
  "j.table-full": "The table is full: every seat is taken.",
  "j.match-over": "The match at this table is over.",
  "j.unknown-table": "There is no such table: the link is wrong, or the table is gone.",
  "s.seat-lost": "This seat is no longer yours.",
  "s.left": "You left the table. Open another one, or join one from the public tables.",
  "i.copy": "Copy link",
  "i.copied": "Copied",
  "i.selected": "Selected: copy it",
  "s.give-name": "Give your name and take your seat.",
  "s.no-table": "No table",
  "s.no-table-link": "This link opens no table.",
  "s.lobby": "Public tables with a free seat: give your name and take one.",
  "s.lobby-empty": "No public table has a free seat now: open one with Play with friends.",
  "a.public": "public",
  "a.private": "private (invite only)",
  "live.live": "● live",
  "live.connecting": "connecting…",
  "live.reconnecting": "reconnecting…",
  "live.over": "match over",
  "w.dealing": "Dealing…",
  "w.send": ": send each their invite link.",
  "r.not-rated": "Not rated (fewer than two players' sides)",
  "r.after": "Ratings after this match",
  "s.board": "The best players of the variant's family: a conservative skill rating, so a lucky newcomer is not on top.",
  "s.board-empty": "Nobody is rated in this family yet: finish a match against another person.",
  "r.waiting": "Ratings: waiting for the archive…",
  "r.missing": "Ratings: the archive does not have this match yet.",
  "a.target": (n) => `the match ends at ${n} points, `,
  "w.waiting": (n) => (n === 1 ? "Waiting for one more person" : `Waiting for ${n} more people`),
  autopilot: (level) => `autopilot (${level})`,
  "f.person": "a person (invite)", "f.bot-level": (level) => `bot: ${level}`,
  "seats.pick": "Seat", "invite.for": (n) => `Invite for seat ${n}`, "join.seat": (n) => `Join seat ${n}`,
};

const RU = {
  "page.title": "Домино",
  "setup.new": "Новая партия", "setup.variant": "Игра", "setup.players": "Игроков",
  "modes.others": "С людьми на других устройствах:", "modes.friends": "Играть с друзьями",
  "modes.lobby": "Открытые столы", "modes.board": "Рейтинг", "lang.switch": "Язык",
  "status.choose": "Выберите игру и компьютерных игроков, затем нажмите «Новая партия».",
  "hand.yours": "Ваши кости", "scores": "Счёт", "log": "Что было", "next-round": "Следующий раунд",
  "play-again": "Сыграть ещё", "leave": "Уйти",
  you: "Вы", "you.lower": "вы",
  seat: (n) => `Место ${n}`,
  "seat.level": (n, level) => `Место ${n} (${RU.level(level)})`,
  level: (l) => ({ expert: "эксперт", greedy: "жадный", random: "случайный", human: "человек", person: "человек" }[l] ?? l),
  team: (n) => `Команда ${n}`,
  tiles: (n) => `${n} ${ruPlural(n, "кость", "кости", "костей")}`,
  players: (n) => `${n} ${ruPlural(n, "игрок", "игрока", "игроков")}`,
  "chip.score": (s) => `счёт ${s}`, "chip.points": (s) => `${s} очк.`, "chip.knocked": "стучит",
  "chip.free": "место свободно",
  leads: (who, you) => (you ? "Вы ходите первым" : `${who} ходит первым`),
  wins: (who, you) => (you ? "Вы выиграли" : `${who} выиграл`),
  "status.match-over": "Партия окончена.", "status.round-over": "Раунд окончен.",
  "status.game-over": "Игра окончена.", "status.waiting": "Ждём.", "status.your-turn": "Ваш ход",
  "status.seat-turn": (who) => `${who}: ваш ход`, "status.hot-seat": " (по очереди за одним экраном)",
  "status.to-move": (who) => `Ходит ${who}`,
  "status.wait-seat": (n) => `Ждём, когда кто-нибудь займёт место ${n}`,
  "status.your-time": " Ваше время вышло.", "status.their-time": (who) => ` У игрока ${who} вышло время.`,
  "title.your-turn": "Ваш ход · ",
  "log.played": (who, a) => `${who}: ход ${a}`, "log.drew": (who, tile) => `${who}: взял с базара ${tile}`,
  "log.drew-one": (who) => `${who}: взял кость с базара`, "log.knocked": (who) => `${who}: стучит`,
  "log.scored": (who, points, count) => `${who}: +${points} ${ruPlural(points, "очко", "очка", "очков")}`
    + (count ? ` (сумма на открытых концах ${count})` : ""),
  "log.round-over": (n, ending) => `Раунд ${n} окончен: ${ending}`, "log.match-over": "Партия окончена",
  "log.dealt": (n) => `Раунд ${n}: кости розданы`,
  "log.picked": (who, tile) => `${who}: выбрал плитку ${tile}`, "log.placed": (who, tile) => `${who}: положил плитку ${tile}`,
  "log.discarded": (who, tile) => `${who}: сбросил плитку ${tile}`, "log.row": (tiles) => `Новый ряд: ${tiles}`,
  "log.game-over": (s) => `Игра окончена: ${s}`, "log.dynasty-over": (s) => `Династия окончена: ${s}`,
  "log.timed-out": (who) => `${who}: время вышло`,
  ending: (e) => ({ out: "выход", fish: "рыба", blocked: "рыба", sortir: "сортир", timeout: "время вышло" }[e] ?? e),
  "hand.of": (who) => `Кости: ${who}`, "hand.empty": (whose) => `${whose} — пусто`,
  "action.draw": "На базар: взять кость", "action.pass": "Пас (стучу)",
  "tile.aria": (tile, legal) => `кость ${tile}` + (legal ? ", можно ходить" : ""),
  "choose.prompt": (tile) => `${tile} подходит к нескольким концам: нажмите на конец на столе или кнопку ниже.`,
  "choice.on": (tile, arm, closes) => `${tile} на ${arm}${closes ? " (закрыть направление)" : ""}`,
  "choice.lead": (tile) => `${tile} (первый ход)`,
  "board.empty": "На столе пусто", "board.tiles": (n) => `${RU.tiles(n)} на столе`,
  "board.play-on": (tile, arm) => `ход ${tile} на ${arm}`, "board.spinner": " (спиннер)",
  "board.just-played": (who) => `, только что: ${who}`,
  "not-allowed": (text) => `Так нельзя: ${text}`,
  "no-start": (text) => `Партия не началась: ${text}`, "no-next": (text) => `Следующего раунда нет: ${text}`,
  "no-gateway": (text) => `Сервер не отвечает: ${text}`,
  // "Раунд 3: Борис вышел" (who went out says the ending), "Раунд 4: рыба".
  "round.result": (n, ending) => (ending === "выход" ? `Раунд ${n}` : `Раунд ${n}: ${ending}`), "round.won-by": (who, you, ending) => (ending === "out" ? (you ? ": вы вышли" : `: ${who} вышел`)
    : you ? ", выиграли вы" : `, выиграл ${who}`),
  "round.points": (list) => `. Очки за раунд: ${list}.`, "round.match-over": " Партия окончена.",
  "scores.round": (n) => `Раунд ${n}`, "scores.written": "Записано", "scores.remembered": "Запомнено",
  "scores.score": "Очки", "scores.points": "Очки", "scores.crowns": "Короны",
  "scores.largest": "Самая большая область", "scores.dynasty": "Итог династии",
  "scores.fish": "рыба", "scores.eggs-term": "яйца", "scores.eggs": (n) => `яйца ${n}`, "scores.pot": (n) => `яйца в банке: ${n}`,
  "scores.lost": "Проиграл", "scores.loser": (animal) => (animal === "goat" ? "Козёл" : animal === "donkey" ? "Осёл" : "Выбыл"),
  "scores.loses": "проиграл",
  animal: (a) => ({ goat: "козлу", donkey: "ослу" }[a] ?? a),
  "term.written": (target, animal) => `очки, которые идут в счёт. Много — плохо: кто первым наберёт ${target}, тот ${
    animal === "goat" ? "«козёл»" : "«осёл»"} и проиграл.`,
  "term.remembered": (th) => `раунд меньше чем на ${th} очков не записывается, а «запоминается», пока раунд на ${th}`
    + " или больше не откроет счёт вместе с ними; кто «вышел» до этого, теряет запомненные очки.",
  "term.fish": "раунд закрыт, ходить никто не может.",
  "term.eggs": "в рыбе поровну у нескольких с наибольшими очками; очки ждут того, у кого больше всех в следующем раунде.",
  "term.bykovo": (limit) => `очки на оставшихся костях, у выигравшего кон 0. Много — плохо: на ${limit} игрок выбывает.`,
  "term.bykovo-fish": "кон закрыт, на обоих концах одно число.",
  "term.block": "у кого меньше всех на руках, получает очки остальных. Много — хорошо.",
  "term.score": (target) => `очки за ходы и за самую лёгкую руку. Много — хорошо: выигрывает первый, кто наберёт ${target}.`,
  "closest.none": (what) => `Ближе всех к ${what}: записанных очков ещё нет ни у кого.`,
  "closest.some": (what, names, top, limit) => `Ближе всех к ${what}: ${names} (${top} из ${limit}).`,
  "closest.out": "выбыванию",
  "kd.place": (tile) => `Положите плитку ${tile}: нажмите её первую клетку в своём королевстве, потом вторую`,
  "kd.pick": "Выберите плитку следующего ряда", "kd.nowhere": "Плитку некуда положить: ",
  "kd.discard": (tile) => `Сбросить плитку ${tile}`, "kd.to-place": "Положить", "kd.next-row": "Следующий ряд",
  "kd.over": (result, by) => `Игра окончена: ${result} (решило: ${by}).`,
  "kd.share": (names) => `${names}: победа поровну`, "kd.and": " и ",
  "kd.nothing": "Сейчас нечего класть.",
  terrain: (t) => ({ wheat: "пшеница", forest: "лес", lake: "озеро", grassland: "луг", swamp: "болото", mine: "шахта" }[t] ?? t),
  "kd.crown": "корона: область приносит клетки × короны", "kd.castle": "замок",
  "table.you-are": (name, n) => `${name}: ваше место ${n}`,
  "rating.new": "рейтинг: новый", "rating.of": (r) => `рейтинг ${r}`,
  "you.lower-self": "вы", "seats.bot": (level) => `бот (${RU.level(level)})`, "seats.you": " (вы)", "seats.free": "свободно",
  "f.your-tables": "Ваши столы",
  "f.open": "Открыть стол",
  "f.seats": "Места",
  "f.target": "Очков до конца партии",
  "f.table-name": "Название стола",
  "f.optional": "необязательно",
  "f.on-leave": "Если кто-то уйдёт",
  "f.wait": "партия ждёт нового человека",
  "f.bot": "за место играет жадный бот",
  "f.clock": "Часы",
  "f.none": "нет",
  "f.clock.move:10": "10 с на ход",
  "f.clock.move:30": "30 с на ход",
  "f.clock.move:60": "1 мин на ход",
  "f.clock.bank:180:2": "3 мин на партию + 2 с за ход",
  "f.clock.bank:300:5": "5 мин на партию + 5 с за ход",
  "f.clock.bank:600:10": "10 мин на партию + 10 с за ход",
  "f.on-timeout": "Когда время вышло",
  "f.rule": "по правилу игры: это место проигрывает",
  "f.auto-greedy": "жадный бот играет, пока человек не вернётся",
  "f.auto-expert": "бот-эксперт играет, пока человек не вернётся",
  "f.public": "Открытый: в списке столов, сесть может любой",
  "f.open-button": "Открыть стол",
  "f.any": "любая",
  "f.more-tables": "Ещё столы",
  "f.take-seat": "Занять место",
  "f.leave-table": "Уйти из-за стола",
  "f.by": "По",
  "f.by-skill": "рейтингу мастерства",
  "f.by-points": "очкам рейтинга из правил (Козёл)",
  "f.more-players": "Ещё игроки",
  "s.open": "Откройте стол: выберите места для людей и для компьютера, затем пошлите каждому его ссылку-приглашение.",
  "s.name-first": "Сначала назовитесь: ваше имя видят другие игроки.",
  "j.invalid-invite": "Эта ссылка не открывает места: код неизвестен или уже использован. Попросите у того, кто открыл стол, новую ссылку.",
  "j.invite-required": "Это закрытый стол: место за ним занимают только по ссылке-приглашению.",
  "j.seat-taken": "Это место только что занял кто-то другой: выберите другое.",
  "j.table-full": "Стол полон: все места заняты.",
  "j.match-over": "Партия за этим столом окончена.",
  "j.unknown-table": "Такого стола нет: ссылка неверна или стол уже закрыт.",
  "s.seat-lost": "Это место больше не ваше.",
  "s.left": "Вы ушли из-за стола. Откройте другой или сядьте за открытый стол.",
  "i.copy": "Копировать ссылку",
  "i.copied": "Скопировано",
  "i.selected": "Выделено: скопируйте",
  "s.give-name": "Назовитесь и займите своё место.",
  "s.no-table": "Стола нет",
  "s.no-table-link": "Эта ссылка не открывает стола.",
  "s.lobby": "Открытые столы со свободным местом: назовитесь и садитесь.",
  "s.lobby-empty": "Сейчас ни за одним открытым столом нет свободного места: откройте свой («Играть с друзьями»).",
  "a.public": "открытый",
  "a.private": "закрытый (только по приглашению)",
  "live.live": "● на связи",
  "live.connecting": "подключение…",
  "live.reconnecting": "переподключение…",
  "live.over": "партия окончена",
  "w.dealing": "Раздача…",
  "w.send": ": пошлите каждому его ссылку-приглашение.",
  "r.not-rated": "Без рейтинга (меньше двух сторон-игроков)",
  "r.after": "Рейтинг после этой партии",
  "s.board": "Лучшие игроки этого семейства игр: осторожный рейтинг мастерства, так что новичок, которому повезло, не окажется наверху.",
  "s.board-empty": "В этом семействе игр рейтинга ещё нет ни у кого: сыграйте партию с другим человеком.",
  "r.waiting": "Рейтинг: ждём архив…",
  "r.missing": "Рейтинг: этой партии в архиве ещё нет.",
  "a.target": (n) => `партия до ${n} очков, `,
  "w.waiting": (n) => `Ждём ещё ${n} ${ruPlural(n, "человека", "человек", "человек")}`,
  autopilot: (level) => `автопилот (${RU.level(level)})`,
  "f.person": "человек (приглашение)", "f.bot-level": (level) => `бот: ${RU.level(level)}`,
  "seats.pick": "Место", "invite.for": (n) => `Приглашение на место ${n}`, "join.seat": (n) => `Сесть на место ${n}`,
};
// The variants' names in Russian: the seeds' names of the games (RULES.md section titles).
const VARIANTS_RU = { kozel: "Козёл", "kozel-classic": "Козёл (классический)", osel: "Осёл", bykovo: "Быковское домино",
  "threes-fives": "Тройки и пятёрки", "all-threes": "All Threes", "all-fives": "All Fives",
  "fives-and-threes": "Fives and Threes", block: "Block", kingdomino: "Лоскутное королевство" };

const DICTS = { en: EN, ru: RU };

function chosen() {
  const kept = localStorage.getItem(STORE);
  if (kept && DICTS[kept]) return kept;
  for (const wanted of navigator.languages || [navigator.language || "en"]) {
    const base = String(wanted).toLowerCase().split("-")[0];
    if (DICTS[base]) return base;
  }
  return "en";
}
export let lang = chosen();

export function t(key, ...args) {
  const entry = DICTS[lang][key] ?? EN[key];
  if (entry === undefined) return key;
  return typeof entry === "function" ? entry(...args) : entry;
}
// A variant as the person reads it: its Russian name in Russian, else its preset name.
export const variantName = (name) => (lang === "ru" ? VARIANTS_RU[name] ?? name : name);

// Fill the static page's marked texts in the current language.
export function translatePage(root = document) {
  document.documentElement.lang = lang;
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
  for (const el of root.querySelectorAll("[data-i18n-label]")) el.setAttribute("aria-label", t(el.dataset.i18nLabel));
}
// The person's choice: kept for their next visit; `then` redraws what the page drew from code.
export function setLanguage(next) {
  if (!DICTS[next]) return;
  lang = next;
  localStorage.setItem(STORE, next);
  translatePage();
}
