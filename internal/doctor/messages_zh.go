package doctor

// messagesZH: see messages_en.go.
var messagesZH = map[string]string{}
