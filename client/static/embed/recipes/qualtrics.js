/* deniable-embed %%VERSION%%: question "%%QID%%" of survey "%%SLUG%%", in Qualtrics (deniable's docs: embedding, Qualtrics).
 *
 * Paste this into the JavaScript of a Text/Graphic question (the question's gear, "Add JavaScript").
 * Once per survey, in Look & Feel > General > Header (source view), load the embed by its hash:
 *   <script src="%%SRC%%" integrity="%%INTEGRITY%%" crossorigin="anonymous"></script>
 * and in the Survey Flow, before this block, add a "Set Embedded Data" element with the field %%COLUMN%%.
 *
 * The report lands in the embedded data field %%COLUMN%%: the column %%COLUMN%% of the CSV export.
 * The true answer stays in this question's own inputs (no name; Qualtrics does not record them).
 * Holds: epsilon-local differential privacy against anyone who sees the reports.  Does not hold:
 * privacy at rest on the respondent's device (the report is kept in localStorage, so a back button
 * or a reload re-sends it instead of drawing again), nor anything about what Qualtrics records
 * (IP address, location, times, duration, the other answers): deniable cannot scrub it.
 */
Qualtrics.SurveyEngine.addOnload(function () {
  var question = this;
  var design = %%DESIGN%%;
  var host = document.createElement("div");
  question.getQuestionContainer().appendChild(host);
  var handle = DeniableEmbed.mount(host, { design: design, question: "%%QID%%" });
  if (handle.question.required) {
    question.disableNextButton();
    host.addEventListener("change", function () {
      if (handle.answered()) question.enableNextButton();
    });
  }
  Qualtrics.SurveyEngine.addOnPageSubmit(function (type) {
    if (type !== "next") return;
    var result = handle.commit();
    if (result !== null) Qualtrics.SurveyEngine.setEmbeddedData("%%COLUMN%%", JSON.stringify(result));
  });
});
